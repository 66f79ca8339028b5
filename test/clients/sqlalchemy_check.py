"""The clients suite's SQLAlchemy part (test/run-tests.sh, suite clients):
a table with a bloomidx index, as README.md spells it, against a
throwaway cluster (PGHOST, PGPORT, PGUSER, PGDATABASE from the
environment).

Creates the table and index (metadata.create_all), runs lookups through
the index and checks each against a sequential scan, reflects the index
(the inspector, and a Table autoloaded from the database) and creates the
reflected table and its index again in another schema.  Exits non-zero, saying why, on
any difference.
"""
import os
import sys

import sqlalchemy as sa
from sqlalchemy.schema import CreateIndex

url = sa.engine.URL.create(
    "postgresql+psycopg2",
    username=os.environ["PGUSER"],
    database=os.environ["PGDATABASE"],
    query={"host": os.environ["PGHOST"], "port": os.environ["PGPORT"]},
)
engine = sa.create_engine(url, future=True)
metadata = sa.MetaData()
events = sa.Table(
    "events", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("device", sa.Integer, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("site", sa.Text),
    sa.Index("events_bl", "device", "kind", "site", postgresql_using="bloomidx",
             postgresql_with={"false_positive_rate": 0.01}),
)

FAILURES = []


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        FAILURES.append(what)


metadata.drop_all(engine)
metadata.create_all(engine)
kinds = ["open", "close", "error", "ping"]
with engine.begin() as conn:
    conn.execute(events.insert(), [
        {"id": g, "device": (g * 7919) % 800, "kind": kinds[g % 4],
         "site": None if g % 10 == 0 else "s%d" % (g % 37)}
        for g in range(1, 6001)
    ])
    conn.execute(sa.text("ANALYZE events"))

lookups = [
    sa.and_(events.c.device == 42, events.c.kind == "error"),
    events.c.device == 17,
    sa.and_(events.c.kind == "ping", events.c.site == "s5"),
    events.c.device.in_([1, 2, 3, 500]),
    sa.and_(events.c.device == -1, events.c.kind == "open"),
]
for cond in lookups:
    query = sa.select(events.c.id).where(cond).order_by(events.c.id)
    text = str(query.compile(engine, compile_kwargs={"literal_binds": True}))
    where = text.split("WHERE")[-1].split("ORDER")[0].strip()
    with engine.connect() as conn:
        conn.execute(sa.text("SET enable_seqscan = off"))
        plan = "\n".join(r[0] for r in conn.execute(sa.text("EXPLAIN " + text)))
        through_index = [r[0] for r in conn.execute(query)]
        conn.execute(sa.text("SET enable_seqscan = on"))
        conn.execute(sa.text("SET enable_bitmapscan = off"))
        by_seqscan = [r[0] for r in conn.execute(query)]
    check("Bitmap Index Scan on events_bl" in plan, "%s uses the index" % where)
    check(through_index == by_seqscan,
          "%s: %d rows through the index, as a sequential scan" % (where, len(by_seqscan)))

# Reflection: the inspector, and a Table autoloaded from the database.
indexes = {i["name"]: i for i in sa.inspect(engine).get_indexes("events")}
bl = indexes.get("events_bl", {})
check(bl.get("dialect_options", {}).get("postgresql_using") == "bloomidx",
      "the inspector sees events_bl as bloomidx (%s)" % bl.get("dialect_options"))
check(bl.get("column_names") == ["device", "kind", "site"],
      "the inspector gives its columns (%s)" % bl.get("column_names"))
reflected = sa.Table("events", sa.MetaData(), autoload_with=engine)
(index,) = [i for i in reflected.indexes if i.name == "events_bl"]
ddl = str(CreateIndex(index).compile(engine))
check("USING bloomidx" in ddl, "the reflected index's DDL says USING bloomidx (%s)" % ddl.strip())

# The reflected table and its index made again in another schema.
with engine.begin() as conn:
    conn.execute(sa.text("DROP SCHEMA IF EXISTS copied CASCADE"))
    conn.execute(sa.text("CREATE SCHEMA copied"))
copy_md = sa.MetaData()
reflected.to_metadata(copy_md, schema="copied")
copy_md.create_all(engine)
with engine.connect() as conn:
    am = conn.execute(sa.text(
        "SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'copied' AND c.relname = 'events_bl'")).scalar()
check(am == "bloomidx", "the reflected index created again is bloomidx (%s)" % am)
copy_md.drop_all(engine)
metadata.drop_all(engine)
with engine.begin() as conn:
    conn.execute(sa.text("DROP SCHEMA copied"))

print("sqlalchemy %s: %d failures" % (sa.__version__, len(FAILURES)))
sys.exit(1 if FAILURES else 0)
