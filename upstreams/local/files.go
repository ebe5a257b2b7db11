package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Public size limits of uploads.
const (
	maxFileBytes      = 512 << 20
	maxBatchFileBytes = 200 << 20
	// maxFormFieldBytes bounds the non-file fields of the upload form.
	maxFormFieldBytes = 4 << 10
)

// filePurposes are the purposes the public API accepts on upload.
var filePurposes = map[string]bool{"assistants": true, "batch": true, "fine-tune": true, "vision": true, "user_data": true, "evals": true}

type fileObject struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	Bytes         int64   `json:"bytes"`
	CreatedAt     int64   `json:"created_at"`
	ExpiresAt     *int64  `json:"expires_at"`
	Filename      string  `json:"filename"`
	Purpose       string  `json:"purpose"`
	Status        string  `json:"status"`
	StatusDetails *string `json:"status_details"`
}

func toFileObject(f *store.File) fileObject {
	return fileObject{ID: f.ID, Object: "file", Bytes: f.Bytes, CreatedAt: f.CreatedAt, ExpiresAt: f.ExpiresAt,
		Filename: f.Filename, Purpose: f.Purpose, Status: "processed"}
}

// uploadForm is what the multipart form said besides the file.
type uploadForm struct {
	purpose        string
	expiresAnchor  string
	expiresSeconds string
}

// createFile streams the `file` part to the store. Form fields may come
// before or after the file; the file is listed only once the whole form
// has been read and checked, and a refused upload leaves nothing behind.
func (l *Local) createFile(w http.ResponseWriter, c *upstreams.Call) error {
	r := c.Request
	if r.ContentLength > maxFileBytes+maxFormBytes {
		return tooLarge(maxFileBytes)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxFileBytes+maxFormBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return upstreams.InvalidRequest("file", "The request is not a multipart/form-data upload with a boundary.")
	}
	var form uploadForm
	var f *store.File
	err = l.readUpload(w, c, mr, &form, &f)
	if err == nil {
		err = checkUpload(f, &form)
	}
	if err == nil {
		err = l.overQuotaOr(w, l.store.InsertFile(r.Context(), f))
	}
	if err != nil {
		if f != nil {
			if derr := l.store.DiscardFileContent(f.ID); derr != nil {
				l.logger.Error("removing refused upload", zap.String("file", f.ID), zap.Error(derr))
			}
		}
		return err
	}
	upstreams.WriteJSON(w, http.StatusOK, toFileObject(f))
	return nil
}

// maxFormBytes is room for the multipart framing and the small fields.
const maxFormBytes = 1 << 20

// readUpload reads every part: the form fields into form, the file's
// content into the store (as *f), within what is left of the owner's
// storage quota.
func (l *Local) readUpload(w http.ResponseWriter, c *upstreams.Call, mr *multipart.Reader, form *uploadForm, f **store.File) error {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return uploadReadError(err)
		}
		switch part.FormName() {
		case "file":
			if *f != nil {
				return upstreams.InvalidRequest("file", "Only one file may be uploaded per request.")
			}
			name := uploadFilename(part)
			if err := checkFilename(name, form.purpose); err != nil {
				return err
			}
			limit := int64(maxFileBytes)
			if form.purpose == "batch" {
				limit = maxBatchFileBytes
			}
			room, err := l.storageRoom(c.Request.Context(), c.Principal.Owner)
			if err != nil {
				return err
			}
			left := limit
			if room >= 0 && room < limit {
				left = room
			}
			nf := &store.File{ID: store.NewID("file-"), Owner: c.Principal.Owner, Filename: name, CreatedAt: store.Now(), Quota: l.StorageQuota}
			src := &countingReader{r: part, left: left}
			n, err := l.store.WriteFileContent(c.Request.Context(), nf.ID, src)
			if err != nil {
				l.store.DiscardFileContent(nf.ID)
				switch {
				case src.over && left < limit:
					return l.storageQuotaError(w)
				case src.over:
					return tooLarge(limit)
				case src.readErr != nil:
					return uploadReadError(src.readErr)
				}
				return fmt.Errorf("storing upload: %w", err)
			}
			lines := src.lines.count()
			nf.Bytes, nf.Lines = n, &lines
			*f = nf
		case "purpose", "expires_after[anchor]", "expires_after[seconds]":
			value, err := io.ReadAll(io.LimitReader(part, maxFormFieldBytes))
			if err != nil {
				return uploadReadError(err)
			}
			switch part.FormName() {
			case "purpose":
				form.purpose = strings.TrimSpace(string(value))
			case "expires_after[anchor]":
				form.expiresAnchor = string(value)
			default:
				form.expiresSeconds = string(value)
			}
		}
	}
}

// checkUpload checks the form as a whole and sets purpose and expiry.
func checkUpload(f *store.File, form *uploadForm) error {
	if form.purpose == "" {
		return upstreams.InvalidRequest("purpose", "purpose is required.")
	}
	if !filePurposes[form.purpose] {
		return upstreams.InvalidRequest("purpose", "purpose must be one of assistants, batch, fine-tune, vision, user_data, evals; got %q.", form.purpose)
	}
	if f == nil {
		return upstreams.InvalidRequest("file", "file is required.")
	}
	if err := checkFilename(f.Filename, form.purpose); err != nil {
		return err
	}
	if form.purpose == "batch" && f.Bytes > maxBatchFileBytes {
		return tooLarge(maxBatchFileBytes)
	}
	f.Purpose = form.purpose
	if form.expiresAnchor != "" || form.expiresSeconds != "" {
		if form.expiresAnchor != "created_at" {
			return upstreams.InvalidRequest("expires_after.anchor", "expires_after[anchor] must be created_at.")
		}
		secs, err := strconv.ParseInt(form.expiresSeconds, 10, 64)
		if err != nil || secs < 3600 || secs > 2592000 {
			return upstreams.InvalidRequest("expires_after.seconds", "expires_after[seconds] must be between 3600 and 2592000.")
		}
		at := f.CreatedAt + secs
		f.ExpiresAt = &at
	}
	return nil
}

// formEscapes undoes the escaping of the HTML standard's multipart/form-data
// encoding, which browsers, openai-node (undici's FormData) and openai-python
// (httpx) apply to a filename: `"` as %22, CR as %0D, LF as %0A, and
// nothing else. Go's mime/multipart reads quoted-string escapes (`\"`, as
// openai-go sends) but leaves these as they are.
var formEscapes = strings.NewReplacer("%22", `"`, "%0D", "\r", "%0A", "\n", "%0d", "\r", "%0a", "\n")

// uploadFilename is the file part's filename as the client named it.
func uploadFilename(part *multipart.Part) string {
	return formEscapes.Replace(part.FileName())
}

// maxFilename bounds a stored filename, in bytes: it is kept with the file
// and shown in every listing and search result.
const maxFilename = 512

func checkFilename(name, purpose string) error {
	if name == "" {
		return upstreams.InvalidRequest("file", "The file part has no filename.")
	}
	if len(name) > maxFilename {
		return upstreams.InvalidRequest("file", "The filename is longer than %d bytes.", maxFilename)
	}
	if purpose == "batch" && !strings.HasSuffix(strings.ToLower(name), ".jsonl") {
		return upstreams.InvalidRequest("file", "Files with purpose batch must be .jsonl files; got %q.", name)
	}
	return nil
}

func tooLarge(limit int64) *upstreams.Error {
	return &upstreams.Error{Status: http.StatusRequestEntityTooLarge, Type: upstreams.TypeInvalidRequest, Param: "file",
		Message: fmt.Sprintf("The file is larger than the %d bytes allowed for its purpose.", limit)}
}

func uploadReadError(err error) *upstreams.Error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return tooLarge(maxFileBytes)
	}
	return upstreams.InvalidRequest("file", "The upload could not be read: the multipart body is malformed or was cut short.")
}

// countingReader reads an upload part, failing once more than left bytes
// come, counts its lines, and remembers whether reading (the client's
// side) failed.
type countingReader struct {
	r       io.Reader
	left    int64
	over    bool
	readErr error
	lines   lineCounter
}

var errTooLarge = errors.New("upload over the size limit")

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.lines.Write(p[:n])
	c.left -= int64(n)
	if c.left < 0 {
		c.over = true
		return n, errTooLarge
	}
	if err != nil && !errors.Is(err, io.EOF) {
		c.readErr = err
	}
	return n, err
}

func (l *Local) listFiles(w http.ResponseWriter, c *upstreams.Call) error {
	q, err := listQuery(c, 10000, 10000)
	if err != nil {
		return err
	}
	q.Purpose = c.Request.URL.Query().Get("purpose")
	files, hasMore, err := l.store.ListFiles(c.Request.Context(), c.Principal.Owner, q)
	if err != nil {
		return err
	}
	data := make([]fileObject, len(files))
	for i := range files {
		data[i] = toFileObject(&files[i])
	}
	upstreams.WriteJSON(w, http.StatusOK, listPage(data, hasMore, func(f fileObject) string { return f.ID }))
	return nil
}

func (l *Local) retrieveFile(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["file_id"]
	f, err := l.store.GetFile(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return notFoundOr(err, "file", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toFileObject(f))
	return nil
}

func (l *Local) deleteFile(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["file_id"]
	if _, err := l.store.GetFile(c.Request.Context(), c.Principal.Owner, id); err != nil {
		return notFoundOr(err, "file", id) // an expired file is gone already
	}
	if err := removeFile(c.Request.Context(), l.store, c.Principal.Owner, id); err != nil {
		return notFoundOr(err, "file", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "file", "deleted": true})
	return nil
}

func (l *Local) fileContent(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["file_id"]
	f, err := l.store.GetFile(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return notFoundOr(err, "file", id)
	}
	rc, err := l.store.OpenFile(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return notFoundOr(err, "file", id)
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(f.Bytes, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, rc); err != nil {
		l.logger.Debug("sending file content cut short", zap.String("file", id), zap.Error(err))
	}
	return nil
}

// removeFile deletes a file, expired or not, with its chunks in vector
// stores. The chunks go first: should deleting the file then fail, a retry
// finds nothing left to detach, never chunks of a deleted file.
func removeFile(ctx context.Context, s store.Store, owner, id string) error {
	if vs, _ := store.VectorStoreSupport(s); vs != nil {
		if err := vs.DetachFileEverywhere(ctx, owner, id); err != nil {
			return err
		}
	}
	return s.DeleteFile(ctx, owner, id)
}
