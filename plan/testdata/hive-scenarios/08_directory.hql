-- INSERT OVERWRITE DIRECTORY: a path target.
INSERT OVERWRITE DIRECTORY '${system:runner.work}/export' SELECT order_id, status FROM hshop.orders WHERE amount > 1;
