package ocfl

import (
	"context"
	"encoding/json"
	"path"
	"strings"
)

// ValidateRoot validates the storage root on fsys: its declaration
// (0=ocfl_1.1), ocfl_layout.json, extensions directory and the storage
// hierarchy (no files in intermediate directories, no empty directories,
// no links), then every object in it with ValidateObject, checking that
// each sits at the path the 0004 layout gives its id when the root uses
// this package's layout. Object findings carry paths from the storage
// root. Cost: a listing per directory plus ValidateObject of every object.
func ValidateRoot(ctx context.Context, fsys FS) *Report {
	r := &Report{}
	entries, err := fsys.ReadDir(ctx, ".")
	if err != nil {
		r.errorf("E069", ".", "cannot list the storage root: %v", err)
		return r
	}
	var decls []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name, "0=") {
			decls = append(decls, e.Name)
		}
	}
	rootSpec := ""
	switch {
	case len(decls) == 0:
		r.errorf("E069", ".", "no storage root declaration (0=ocfl_1.1)")
	case len(decls) > 1:
		r.errorf("E076", ".", "more than one storage root declaration")
	case decls[0] != "0=ocfl_1.1" && decls[0] != "0=ocfl_1.0":
		r.errorf("E077", decls[0], "declaration is not 0=ocfl_1.1")
	default:
		rootSpec = decls[0][len("0=ocfl_"):]
		if data, err := ReadFile(ctx, fsys, decls[0], 64); err != nil || string(data) != decls[0][2:]+"\n" {
			r.errorf("E080", decls[0], "declaration's content is not %q followed by a newline", decls[0][2:])
		}
	}
	ourLayout := false
	if hasEntry(entries, layoutFile) {
		var layout map[string]any
		data, err := ReadFile(ctx, fsys, layoutFile, 1<<20)
		if err != nil || json.Unmarshal(data, &layout) != nil {
			r.errorf("E070", layoutFile, "not a JSON object")
		} else {
			ext, ok1 := layout["extension"].(string)
			_, ok2 := layout["description"].(string)
			if !ok1 || !ok2 {
				r.errorf("E070", layoutFile, "needs the string keys extension and description")
			} else if !registeredExtensions[ext] {
				r.errorf("E071", layoutFile, "extension %q is not a registered extension", ext)
			} else if ext == LayoutExtension {
				cfg, err := ReadFile(ctx, fsys, layoutConfig, 1<<20)
				ourLayout = err == nil && checkLayoutConfig(cfg) == nil
			}
		}
	}
	for _, e := range entries {
		switch {
		case e.Irregular:
			r.errorf("E090", e.Name, "links and special files are not allowed")
		case e.Name == "extensions" && e.Dir:
			exts, err := fsys.ReadDir(ctx, "extensions")
			if err != nil {
				r.errorf("E112", "extensions", "cannot list: %v", err)
				continue
			}
			for _, x := range exts {
				if !x.Dir {
					r.errorf("E112", "extensions/"+x.Name, "the extensions directory holds a file")
				} else if !registeredExtensions[x.Name] {
					r.warnf("W016", "extensions/"+x.Name, "extension %q is not a registered extension", x.Name)
				}
			}
		case e.Dir:
			walkHierarchy(ctx, fsys, e.Name, rootSpec, ourLayout, r)
		}
		// Other files at the top are ignored (E087).
	}
	return r
}

// walkHierarchy validates the storage hierarchy under dir.
func walkHierarchy(ctx context.Context, fsys FS, dir, rootSpec string, ourLayout bool, r *Report) {
	if ctx.Err() != nil {
		r.errorf("E072", dir, "not walked: %v", ctx.Err())
		return
	}
	entries, err := fsys.ReadDir(ctx, dir)
	if err != nil {
		r.errorf("E072", dir, "cannot list: %v", err)
		return
	}
	if len(entries) == 0 {
		r.errorf("E073", dir, "empty directory in the storage hierarchy")
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, "0=ocfl_object_") && !e.Dir {
			validateRootObject(ctx, fsys, dir, e.Name, rootSpec, ourLayout, r)
			return
		}
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name)
		switch {
		case e.Irregular:
			r.errorf("E090", p, "links and special files are not allowed")
		case e.Dir:
			walkHierarchy(ctx, fsys, p, rootSpec, ourLayout, r)
		default:
			r.errorf("E084", p, "file in an intermediate directory of the storage hierarchy")
		}
	}
}

// validateRootObject validates one object found in the hierarchy.
func validateRootObject(ctx context.Context, fsys FS, dir, decl, rootSpec string, ourLayout bool, r *Report) {
	if spec := decl[len("0=ocfl_object_"):]; rootSpec != "" && spec > rootSpec {
		r.errorf("E081", path.Join(dir, decl), "object declares OCFL %s, later than the storage root's %s", spec, rootSpec)
	}
	or := ValidateObject(ctx, fsys, dir)
	for _, f := range or.Errors {
		r.errorf(f.Code, path.Join(dir, f.Path), "%s", f.Message)
	}
	for _, f := range or.Warnings {
		r.warnf(f.Code, path.Join(dir, f.Path), "%s", f.Message)
	}
	if !ourLayout {
		return
	}
	data, err := ReadFile(ctx, fsys, path.Join(dir, "inventory.json"), MaxInventorySize)
	if err != nil {
		return
	}
	inv := checkInventory(data, "inventory.json", &Report{})
	if inv != nil && inv.ID != "" && ObjectPath(inv.ID) != dir {
		r.errorf("E083", dir, "object %q is not at its layout path %s", inv.ID, ObjectPath(inv.ID))
	}
}
