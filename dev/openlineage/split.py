"""Splits one openlineage-spark file-transport capture by scenario (see dev/openlineage/capture-spark).

usage: split.py events.jsonl DEST scenario-file...

An event whose `sql` job facet holds a statement of a later scenario file moves the cursor to that
scenario (each scenario starts with DROP DATABASE <its own name>, so the move is unambiguous);
every event is written to DEST/<current scenario>/openlineage.jsonl, unchanged, in order.
"""
import os
import re
import sys


def statements(path):
    """The statements of a scenario as dev/spark/SparkSqlRunner.java splits them."""
    if path.endswith(".java"):
        # a DataFrame program: its spark.sql("...") statements (each starts with DROP DATABASE of its own)
        text = open(path, encoding="utf-8").read()
        return {norm(bytes(m, "utf-8").decode("unicode_escape")) for m in re.findall(r'spark\.sql\(\s*"((?:[^"\\]|\\.)*)"\s*\)', text)}
    out, cur = set(), []
    for line in open(path, encoding="utf-8"):
        s = line.rstrip("\n")
        if s.strip().startswith("--") and not cur:
            continue
        if s.strip().startswith("--"):
            continue
        cur.append(s)
        if s.rstrip().endswith(";"):
            stmt = "\n".join(cur).strip()
            out.add(norm(stmt[:-1]))
            cur = []
    if "".join(cur).strip():
        out.add(norm("\n".join(cur)))
    return out


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def main():
    src, dest, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    names = [os.path.splitext(os.path.basename(f))[0] for f in files]
    stmts = [statements(f) for f in files]
    import json
    cur = 0
    per = {n: [] for n in names}
    for raw in open(src, encoding="utf-8"):
        if not raw.strip():
            continue
        ev = json.loads(raw)
        q = (((ev.get("job") or {}).get("facets") or {}).get("sql") or {}).get("query")
        if q:
            q = norm(q)
            if q not in stmts[cur]:
                for k in range(cur + 1, len(names)):
                    if q in stmts[k]:
                        cur = k
                        break
        per[names[cur]].append(raw if raw.endswith("\n") else raw + "\n")
    for n in names:
        os.makedirs(os.path.join(dest, n), exist_ok=True)
        with open(os.path.join(dest, n, "openlineage.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(per[n])
    print("split.py: %d scenario(s), %d event(s)" % (len(names), sum(len(v) for v in per.values())), file=sys.stderr)


if __name__ == "__main__":
    main()
