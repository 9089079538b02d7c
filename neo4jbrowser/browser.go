package neo4jbrowser

import (
	"embed"
	"html/template"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed colline.grass guide.html queries/*.cypher
var files embed.FS

// Style is the GraSS style sheet.
func Style() []byte {
	b, _ := files.ReadFile("colline.grass")
	return b
}

// Query is one lineage query as shipped.
type Query struct {
	Name   string   // file name without .cypher: "02-upstream-graph"
	Title  string   // its first comment line without "// colline N: "
	Params []string // its ":param ..." comment lines (Browser commands that set an example value)
	Text   string   // the whole file, as run
}

// Queries returns the shipped queries in file order.
func Queries() []Query {
	names, _ := fs.Glob(files, "queries/*.cypher")
	slices.Sort(names)
	out := make([]Query, 0, len(names))
	for _, n := range names {
		b, _ := files.ReadFile(n)
		q := Query{Name: strings.TrimSuffix(path.Base(n), ".cypher"), Text: string(b)}
		for _, line := range strings.Split(q.Text, "\n") {
			c, ok := strings.CutPrefix(line, "// ")
			if !ok {
				break
			}
			switch {
			case strings.HasPrefix(c, ":param "):
				q.Params = append(q.Params, c)
			case q.Title == "":
				if _, t, ok := strings.Cut(c, ": "); ok {
					q.Title = t
				} else {
					q.Title = c
				}
			}
		}
		out = append(out, q)
	}
	return out
}

var guide = template.Must(template.New("guide.html").ParseFS(files, "guide.html"))

// Guide writes the Browser guide. base is where colline ui is reached from the browser
// (http://host:port, no trailing slash): the guide links to the explorer and to the style there.
func Guide(w io.Writer, base string) error {
	return guide.Execute(w, map[string]any{"Base": base, "Queries": Queries()})
}
