package marc

import "os/exec"

func execLookPath(name string) (string, error) { return exec.LookPath(name) }

func execCommand(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}
