"""Runs SQL files and Python DataFrame programs through a Spark Connect server, with pyspark's
Connect client: the client side of dev/capture-connect and of the Spark Connect end-to-end test.

    python dev/connect/run.py --remote 'sc://127.0.0.1:15002/;user_id=alice' [--conf k=v]... FILE.sql|FILE.py...

A .sql file is split as dev/spark/SparkSqlRunner.java splits it (a statement ends with ';' at the
end of a line; full-line '--' comments are skipped) and each statement goes to spark.sql();
queries (SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE, EXPLAIN, FROM) are collected. A .py file is
a program with `run(spark)`. --conf sets a session setting (spark.conf.set) before the first
file: a Connect session's own settings, such as the scheduler's parent run
(spark.openlineage.parentRunId). All files run in one session. One line is printed per
statement; the exit status is 1 when one failed (the rest are not run).
"""
import argparse
import importlib.util
import re
import sys
import time

from pyspark.sql import SparkSession

QUERIES = {"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "FROM"}


def split(text):
    out, cur = [], []
    for line in re.split(r"\r?\n", text):
        t = line.strip()
        if t.startswith("--") or (not t and not cur):
            continue
        if t.endswith(";"):
            cur.append(line[: line.rindex(";")])
            s = "\n".join(cur).strip()
            if s:
                out.append(s)
            cur = []
        else:
            cur.append(line)
    s = "\n".join(cur).strip()
    if s:
        out.append(s)
    return out


def first_word(s):
    m = re.match(r"[A-Za-z]*", s.lstrip().lstrip("("))
    return m.group(0).upper()


def one_line(s):
    t = " ".join(s.split())
    return t if len(t) <= 60 else t[:57] + "..."


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--remote", required=True, help="the Connect URL, sc://host:port/;user_id=NAME")
    p.add_argument("--conf", action="append", default=[], help="k=v: a session setting")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    t0 = time.time()
    spark = SparkSession.builder.remote(a.remote).getOrCreate()
    print(f"connected to Spark {spark.version} at {a.remote.split(';')[0]} in {time.time() - t0:.1f}s", flush=True)
    for kv in a.conf:
        k, _, v = kv.partition("=")
        spark.conf.set(k, v)
    n = 0
    for f in a.files:
        if f.endswith(".py"):
            steps = [("PROGRAM " + f, None)]
        else:
            with open(f, encoding="utf-8") as fh:
                steps = [(s, s) for s in split(fh.read())]
        for head, stmt in steps:
            n += 1
            s0 = time.time()
            try:
                what = "ok"
                if stmt is None:
                    spec = importlib.util.spec_from_file_location("program", f)
                    mod = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(mod)
                    mod.run(spark)
                else:
                    df = spark.sql(stmt)
                    if first_word(stmt) in QUERIES:
                        rows = df.collect()
                        what = f"{len(rows)} row(s)"
                print(f"[{n:3d} {time.time() - s0:6.2f}s] {one_line(head):<60} -> {what}", flush=True)
            except Exception as e:  # the statement failed: say so, stop
                msg = str(e).split("\n", 1)[0]
                print(f"[{n:3d} {time.time() - s0:6.2f}s] {one_line(head):<60} -> FAILED {type(e).__name__}: {msg}", flush=True)
                spark.stop()
                return 1
    spark.stop()
    print(f"done: {n} statement(s) in {time.time() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
