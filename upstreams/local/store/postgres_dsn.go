package store

import (
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
)

// errMalformedDSN is the error of a DSN that does not parse; the parser's
// own message may quote the password, so it is not passed on.
var errMalformedDSN = errors.New("the postgres DSN is malformed: expected postgres://user:password@host:port/database?options or key=value pairs")

// CheckPostgresDSN reports whether OpenPostgres can parse dsn, without
// connecting: a config is checked before anything is opened.
func CheckPostgresDSN(dsn string) error {
	if _, err := pgxpool.ParseConfig(dsn); err != nil {
		return errMalformedDSN
	}
	return nil
}
