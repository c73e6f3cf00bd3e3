"""Validate a storage root written by Shelfmark's ocfl package with ocfl-py.

Usage: python ocflpy_validate.py STORAGE_ROOT
       python ocflpy_validate.py --objects OBJECT_ROOT...

Prints one JSON document: the storage root's validation (errors and
warnings, with ocfl-py's messages), and for every object found, its path,
its id, the path the 0004 layout gives that id, and its own validation.
With --objects, the validation of each object root given.

ocfl-py 2.1.0 implements the 0002 and 0003 storage layouts only; it lets a
program register others (ocfl.layout_registry.add_layout). The 0004
hashed n-tuple layout is registered here, written from the extension's
text (sha256 of the id, three tuples of three characters, then the whole
digest), and its name is added to the storage root's list of registered
extension directories, which predates 0004 (ocfl-py would otherwise warn
W901 about a registered extension). Nothing else of ocfl-py is changed.
"""
import hashlib
import json
import os
import sys

import ocfl
from ocfl.layout import Layout, LayoutException
from ocfl.layout_registry import add_layout
from ocfl.storage_root import StorageRoot
from ocfl.validator import Validator

NAME = "0004-hashed-n-tuple-storage-layout"


class HashedNTuple(Layout):
    """The 0004 layout with the configuration Shelfmark writes."""

    def __init__(self):
        super().__init__()
        self.NAME = NAME
        self.DESCRIPTION = "Hashed N-tuple Storage Layout"
        self.PARAMS = {
            "digestAlgorithm": self._want("digestAlgorithm", "sha256"),
            "tupleSize": self._want("tupleSize", 3),
            "numberOfTuples": self._want("numberOfTuples", 3),
            "shortObjectRoot": self._want("shortObjectRoot", False),
        }

    @staticmethod
    def _want(key, expected):
        def check(value):
            if value is not None and value != expected:
                raise LayoutException("%s is %r, only %r is supported here" % (key, value, expected))
        return check

    def identifier_to_path(self, identifier):
        h = hashlib.sha256(identifier.encode("utf-8")).hexdigest()
        return "/".join([h[0:3], h[3:6], h[6:9], h])


add_layout(NAME, HashedNTuple)


def main(root):
    out = {"ocfl_py": ocfl.__version__, "root": {}, "objects": []}
    store = StorageRoot(root=root)
    store.registered_extensions.append(NAME)
    valid = store.validate(log_warnings=True, check_digests=True)
    out["root"] = {
        "valid": bool(valid),
        "layout": store.layout_name,
        "num_objects": store.num_objects,
        "good_objects": store.good_objects,
        "errors": store.log.num_errors,
        "warnings": store.log.num_warnings,
        "messages": list(store.log.messages) + [m for _, m in store.errors],
    }
    for dirpath, identifier in store.list_objects():
        v = Validator(log_warnings=True, check_digests=True)
        ok = v.validate_object(os.path.join(root, dirpath))
        out["objects"].append({
            "path": dirpath,
            "id": identifier,
            "layout_path": store.object_path(identifier),
            "valid": bool(ok),
            "errors": v.log.num_errors,
            "warnings": v.log.num_warnings,
            "messages": list(v.log.messages),
        })
    json.dump(out, sys.stdout, indent=1)


def objects(paths):
    out = []
    for path in paths:
        v = Validator(log_warnings=True, check_digests=True)
        ok = v.validate_object(path)
        out.append({"path": path, "valid": bool(ok), "errors": v.log.num_errors,
                     "warnings": v.log.num_warnings, "codes": sorted(v.log.codes)})
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "--objects":
        objects(sys.argv[2:])
    else:
        main(sys.argv[1])
