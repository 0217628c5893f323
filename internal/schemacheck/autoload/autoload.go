// Package autoload, imported for its side effect by test packages, makes
// socket/sockettest.New validate every line its servers write against
// Herdr's committed schema with a full JSON Schema validator library.
package autoload

import (
	"github.com/herdr-link/herdr-link/internal/schemacheck"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

func init() {
	sockettest.RegisterChecker(func() (sockettest.Checker, error) {
		p, err := schemacheck.Find()
		if err != nil {
			return nil, err
		}
		return schemacheck.Load(p)
	})
}
