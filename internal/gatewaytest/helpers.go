package gatewaytest

import (
	"crypto/sha256"
	"encoding/hex"
)

// Sha256Hex is the hex SHA-256 of s.
func Sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
