"""Print pymarc's reading of a MARC file as a JSON list of MARC-in-JSON records.

Usage: python marcjson.py PYMARC_SOURCE_DIR FILE
ISO 2709 files are read with pymarc's defaults (MARC-8 converted to Unicode);
.xml files with parse_xml_to_array. Records pymarc cannot read are skipped, as
Shelfmark skips them.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
import pymarc  # noqa: E402

path = sys.argv[2]
if path.endswith(".xml"):
    records = pymarc.parse_xml_to_array(path)
else:
    with open(path, "rb") as fh:
        records = list(pymarc.MARCReader(fh))
json.dump([r.as_dict() for r in records if r is not None], sys.stdout)
