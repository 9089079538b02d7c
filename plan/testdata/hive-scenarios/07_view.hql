-- A view, then a query over it (Hive's lineage goes through the view to its tables).
CREATE VIEW hshop.paid_view AS SELECT order_id, amount FROM hshop.orders WHERE status = 'paid';
CREATE TABLE hshop.paid_copy AS SELECT order_id, amount * 2 AS doubled FROM hshop.paid_view;
