// Package testdocs writes small documents of the formats vector stores
// index (PDF, DOCX, PPTX) for tests, so their text is known exactly.
package testdocs

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// PDF returns a one-page PDF showing each line in Helvetica.
func PDF(lines ...string) []byte {
	var stream strings.Builder
	stream.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, l := range lines {
		l = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		fmt.Fprintf(&stream, "(%s) Tj T*\n", l)
	}
	stream.WriteString("ET")
	return PDFObjects(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", stream.Len(), stream.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	)
}

// CyclicPDF is a PDF of about 240 bytes whose page tree lists itself as
// its only kid.
func CyclicPDF() []byte {
	return PDFObjects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
}

// HugeCountPDF is a PDF of about 240 bytes whose page tree claims two
// billion pages and has one, without content.
func HugeCountPDF() []byte {
	return PDFObjects("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 2000000000 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>")
}

// PDFObjects is a PDF made of the given objects, numbered from 1, the
// first being the catalog, with a correct cross-reference table.
func PDFObjects(objects ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// DOCX returns a Word document with one paragraph per string.
func DOCX(paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		body.WriteString("<w:p><w:r><w:t>" + escape(p) + "</w:t></w:r></w:p>")
	}
	return office(map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body.String() + `</w:body></w:document>`,
	})
}

// PPTX returns a presentation with one slide per string.
func PPTX(slides ...string) []byte {
	parts := map[string]string{}
	for i, s := range slides {
		parts[fmt.Sprintf("ppt/slides/slide%d.xml", i+1)] = `<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>` +
			escape(s) + `</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`
	}
	return office(parts)
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}

func office(parts map[string]string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range parts {
		w, err := zw.Create(name)
		if err != nil {
			panic(err) // writing to memory
		}
		if _, err := w.Write([]byte(content)); err != nil {
			panic(err)
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// DOCXBomb returns a document whose word/document.xml holds run repeated
// times inside one paragraph: a few hundred kilobytes that unpack to
// len(run)*times bytes.
func DOCXBomb(run string, times int) []byte {
	return repeatedDOCX(repeat{docxHead + `<w:p>`, 1}, repeat{run, times}, repeat{`</w:p>` + docxTail, 1})
}

// DOCXDeep returns a document whose word/document.xml nests depth
// elements in one another inside a paragraph's text, around a word: 10
// million levels pack into some 70 KB.
func DOCXDeep(depth int) []byte {
	return repeatedDOCX(repeat{docxHead + `<w:p><w:r><w:t>`, 1}, repeat{`<x>`, depth}, repeat{`deep`, 1},
		repeat{`</x>`, depth}, repeat{`</w:t></w:r></w:p>` + docxTail, 1})
}

const (
	docxHead = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
	docxTail = `</w:body></w:document>`
)

// repeat is a piece of a document's XML and how many times it comes.
type repeat struct {
	s     string
	times int
}

// repeatedDOCX returns a document whose word/document.xml is the pieces,
// each repeated, made without compressing all it unpacks to: a chunk of
// each piece is deflated once, alone and flushed to a byte boundary, and
// the stream repeats the chunk's blocks, which refer to nothing before
// them.
func repeatedDOCX(pieces ...repeat) []byte {
	deflated := func(s string, last bool) []byte {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestCompression)
		io.WriteString(fw, s)
		if last {
			fw.Close()
		} else {
			fw.Flush()
		}
		return b.Bytes()
	}
	var packed bytes.Buffer
	crc := crc32.NewIEEE()
	size := 0
	add := func(s string, times int) {
		if times == 0 {
			return
		}
		d := deflated(s, false)
		for range times {
			packed.Write(d)
			io.WriteString(crc, s)
			size += len(s)
		}
	}
	for _, p := range pieces {
		perChunk := max(1, (64<<10)/len(p.s))
		add(strings.Repeat(p.s, perChunk), p.times/perChunk)
		add(strings.Repeat(p.s, p.times%perChunk), 1)
	}
	packed.Write(deflated("", true))
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(packed.Len()), UncompressedSize64: uint64(size)})
	if err != nil {
		panic(err) // writing to memory
	}
	w.Write(packed.Bytes())
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}
