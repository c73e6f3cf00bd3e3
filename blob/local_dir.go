package blob

// Dir returns the directory of the store (the web interface's dashboard
// reads the space of its file system).
func (s *LocalStore) Dir() string { return s.dir }
