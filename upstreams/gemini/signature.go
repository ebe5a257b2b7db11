package gemini

import "strings"

// A Gemini 3 function call carries a thoughtSignature that must come back
// with the call in the next turn (Gemini answers 400 without it). The
// OpenAI shape has no field for it, but every client echoes a tool call's
// id unchanged (in the assistant message and the tool message), so the
// signature travels inside the id: the call's own id, signatureMark, and
// the signature in unpadded base64url. signatureOf takes it out again.
const signatureMark = ".gts."

// withSignature is the tool call id carrying signature (base64, as Gemini
// sends it); id itself when there is none.
func withSignature(id, signature string) string {
	if signature == "" {
		return id
	}
	r := strings.NewReplacer("+", "-", "/", "_", "=", "")
	return id + signatureMark + r.Replace(signature)
}

// signatureOf is the thoughtSignature (base64, padded) carried by a tool
// call id, "" when it carries none.
func signatureOf(id string) string {
	i := strings.LastIndex(id, signatureMark)
	if i < 0 {
		return ""
	}
	sig := strings.NewReplacer("-", "+", "_", "/").Replace(id[i+len(signatureMark):])
	if n := len(sig) % 4; n != 0 {
		sig += strings.Repeat("=", 4-n)
	}
	return sig
}
