package recording

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes a recording to the file name without ever writing
// through what is already there: the recording goes to a new temporary
// file in name's directory (created exclusively, mode 0600) and is renamed
// over name once complete. A symbolic link or anything but a regular file
// at name is refused and left alone; a regular file is replaced (another
// hard link to it keeps the old content), and the result has mode 0600
// whatever the old file's. On any failure name is as it was and the
// temporary file is removed.
func WriteFile(name string, comments []string, exchanges []Exchange) (err error) {
	if err := CheckFile(name); err != nil {
		return err
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// CreateTemp's mode is 0600 less the umask; make it exactly 0600.
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if err := Write(tmp, comments, exchanges); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// A link planted at name after the check above is replaced, not
	// followed: rename never writes through a link.
	return os.Rename(tmp.Name(), name)
}

// CheckFile reports why WriteFile would refuse name: a symbolic link, or
// anything other than a regular file. A missing name is fine.
func CheckFile(name string) error {
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; a recording is never written through a link: remove it or name another file", name)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v); name a new file or a regular one to replace", name, fi.Mode().Type())
	}
	return nil
}
