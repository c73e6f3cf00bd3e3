"""Harvest with sickle, the third-party OAI-PMH client (PyPI), for the Go tests.

Reads a JSON list of harvests on stdin, each {"name", "verb", "args"}, walks
each list to its end through sickle's own resumption handling, and prints
{"name": [[identifier, deleted, setSpecs, has_metadata], ...]} as JSON.
A list that matches nothing (noRecordsMatch) gives [].
"""
import json
import sys

from sickle import Sickle
from sickle.oaiexceptions import NoRecordsMatch

base = sys.argv[1]
sickle = Sickle(base, max_retries=0, timeout=60)
out = {}
for h in json.load(sys.stdin):
    items = []
    try:
        it = getattr(sickle, h["verb"])(ignore_deleted=False, **h["args"])
        for x in it:
            header = x.header if h["verb"] == "ListRecords" else x
            has_md = h["verb"] == "ListRecords" and not header.deleted and len(x.metadata) > 0
            items.append([header.identifier, header.deleted, header.setSpecs, has_md])
    except NoRecordsMatch:
        pass
    out[h["name"]] = items
json.dump(out, sys.stdout)
