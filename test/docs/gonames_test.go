package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goPackage is what one package of the module declares: its top-level
// names, and the methods and struct fields of its types.
type goPackage struct {
	top     map[string]bool
	members map[string]map[string]bool // type → methods and fields
	any     map[string]bool            // every method and field name
}

// internalPackages reads every package under internal/, by its name.
func internalPackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(repoPath("internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		p := pkgs[f.Name.Name]
		if p == nil {
			p = &goPackage{top: map[string]bool{}, members: map[string]map[string]bool{}, any: map[string]bool{}}
			pkgs[f.Name.Name] = p
		}
		member := func(typ, name string) {
			if p.members[typ] == nil {
				p.members[typ] = map[string]bool{}
			}
			p.members[typ][name] = true
			p.any[name] = true
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.top[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						p.top[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									member(s.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.top[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// goNameRE matches a qualified Go name in backticks: pkg.Name, with an
// optional call and member (ledger.New(time.Now()), budget.Remaining().ByUse,
// verdict.ValidityConfig.Judge).
var goNameRE = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\([^` + "`" + `]*?\))?(?:\.([A-Z][A-Za-z0-9_]*))?`)

// Every Go name of the module's own packages that a document writes in
// backticks (sanitize.URL, protocol.Client.Redactor) is declared: a
// renamed or removed function, type or field cannot linger in the prose.
func TestGoNamesExist(t *testing.T) {
	pkgs := internalPackages(t)
	n := 0
	for _, doc := range append(docFiles(t), "deploy/README.md", "alerts/README.md") {
		for _, span := range codeSpans(repoFile(t, doc)) {
			m := goNameRE.FindStringSubmatch(span)
			if m == nil {
				continue
			}
			p := pkgs[m[1]]
			if p == nil {
				continue // json.Marshal, http.Handler: not ours
			}
			n++
			name, member := m[2], m[3]
			switch {
			case !p.top[name] && !p.any[name]:
				t.Errorf("%s: `%s`: package %s declares no %s", doc, span, m[1], name)
			case member != "" && p.top[name] && p.members[name] != nil && !p.members[name][member]:
				t.Errorf("%s: `%s`: %s.%s has no %s", doc, span, m[1], name, member)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d Go names found in the docs: the pattern is broken", n)
	}
}
