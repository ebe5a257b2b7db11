package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DescribeJSONError says what is wrong with a JSON body in the public
// API's terms, never in Go's (no Go type names, no decoder wording): where
// a syntax error is, or which field holds a value of the wrong JSON type.
func DescribeJSONError(err error) string {
	var syntax *json.SyntaxError
	var wrongType *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("the body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &wrongType):
		if wrongType.Field == "" {
			return fmt.Sprintf("the body must be a JSON object, not %s", jsonKind(wrongType.Value))
		}
		return fmt.Sprintf("%s must not be %s", wrongType.Field, jsonKind(wrongType.Value))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the body is not valid JSON (it ends early)"
	}
	return "the body is not valid JSON"
}

// jsonKind names a JSON value kind as UnmarshalTypeError.Value gives it
// ("string", "number", "number 1.5", "object", "array", "bool").
func jsonKind(value string) string {
	switch {
	case value == "object", value == "array":
		return "an " + value
	case value == "bool":
		return "a boolean"
	case len(value) >= 6 && value[:6] == "number":
		return "a number"
	case value == "string":
		return "a string"
	}
	return "of that type"
}
