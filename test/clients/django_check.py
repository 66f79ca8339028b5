"""The clients suite's Django part (test/run-tests.sh, suite clients): a
model with a bloomidx index, as README.md spells it, against a throwaway
cluster (PGHOST, PGPORT, PGUSER, PGDATABASE from the environment).

Creates the model's table and index with Django's schema editor (what a
migration's CreateModel runs), adds and removes a second index (AddIndex,
RemoveIndex), runs ORM lookups through the index and checks each against
a sequential scan, and reads the index back through Django's
introspection.  Exits non-zero, saying why, on any difference.
"""
import os
import sys

import django
from django.conf import settings

settings.configure(
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": os.environ["PGDATABASE"],
            "USER": os.environ["PGUSER"],
            "HOST": os.environ["PGHOST"],
            "PORT": os.environ["PGPORT"],
        }
    },
    INSTALLED_APPS=["django.contrib.postgres"],
    USE_TZ=True,
)
django.setup()

from django.contrib.postgres.indexes import PostgresIndex  # noqa: E402
from django.db import connection, models  # noqa: E402


class BloomidxIndex(PostgresIndex):
    """CREATE INDEX ... USING bloomidx (Django has BloomIndex for contrib/bloom)."""

    suffix = "bloomidx"


class Order(models.Model):
    customer_id = models.IntegerField()
    region = models.TextField()
    status = models.TextField()
    sku = models.TextField()

    class Meta:
        app_label = "clients"
        indexes = [
            BloomidxIndex(fields=["customer_id", "region", "status", "sku"], name="order_bl"),
        ]


FAILURES = []


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        FAILURES.append(what)


def ids(queryset, via_index):
    """The ids a lookup returns, through the index or by a sequential scan."""
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = %s" % ("off" if via_index else "on"))
        cursor.execute("SET enable_bitmapscan = %s" % ("on" if via_index else "off"))
    plan = queryset.explain()
    return sorted(queryset.values_list("id", flat=True)), plan


with connection.schema_editor() as editor:
    editor.create_model(Order)

regions = ["eu", "us-east", "us-west", "apac"]
statuses = ["new", "paid", "shipped", "delivered", "returned"]
Order.objects.bulk_create(
    Order(customer_id=1 + (g * 7919) % 500, region=regions[g % 4],
          status=statuses[(g // 7) % 5], sku="X-%d" % ((g * 31) % 200))
    for g in range(1, 5001)
)
with connection.cursor() as cursor:
    cursor.execute("ANALYZE clients_order")

lookups = [
    {"region": "eu", "sku": "X-12"},
    {"customer_id": 42},
    {"customer_id": 42, "status": "paid"},
    {"status": "returned", "sku": "X-150", "region": "apac"},
    {"sku": "X-199"},
    {"sku": "no such sku"},
    {"customer_id__in": [3, 77, 404], "region": "us-west"},
]
for lookup in lookups:
    qs = Order.objects.filter(**lookup)
    through_index, plan = ids(qs, True)
    by_seqscan, seq_plan = ids(qs, False)
    check("Bitmap Index Scan on order_bl" in plan, "%s uses the index" % lookup)
    check("Seq Scan" in seq_plan, "%s by a sequential scan for the reference" % lookup)
    check(through_index == by_seqscan,
          "%s: %d rows through the index, as a sequential scan" % (lookup, len(by_seqscan)))

# Django's introspection (inspectdb, migrations' autodetection of indexes).
with connection.cursor() as cursor:
    constraints = connection.introspection.get_constraints(cursor, "clients_order")
bl = constraints.get("order_bl", {})
check(bl.get("index") and bl.get("type") == "bloomidx",
      "introspection sees order_bl as a bloomidx index (%s)" % bl.get("type"))
check(bl.get("columns") == ["customer_id", "region", "status", "sku"],
      "introspection gives its columns in order (%s)" % bl.get("columns"))

# A migration's AddIndex and RemoveIndex, with an option.
extra = BloomidxIndex(fields=["sku", "status"], name="order_sku_bl")
with connection.schema_editor() as editor:
    editor.add_index(Order, extra)
with connection.cursor() as cursor:
    cursor.execute("SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam "
                   "WHERE c.relname = 'order_sku_bl'")
    row = cursor.fetchone()
check(row is not None and row[0] == "bloomidx", "AddIndex made order_sku_bl with bloomidx")
with connection.schema_editor() as editor:
    editor.remove_index(Order, extra)
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM pg_class WHERE relname = 'order_sku_bl'")
    check(cursor.fetchone()[0] == 0, "RemoveIndex dropped it")
with connection.schema_editor() as editor:
    editor.delete_model(Order)

print("django %s: %d failures" % (django.get_version(), len(FAILURES)))
sys.exit(1 if FAILURES else 0)
