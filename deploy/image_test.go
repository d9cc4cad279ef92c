package deploy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// memKube is a copy of deploy/kubernetes in memory, at /kube.
func memKube(t *testing.T) filesys.FileSystem {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	src := filepath.Join(root, "deploy", "kubernetes")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(filepath.Join("/kube", rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// setImage does what `kustomize edit set image NAME=NEWNAME:NEWTAG` does
// in dir: sets the images entry for NAME (adding it if there is none).
func setImage(t *testing.T, mem filesys.FileSystem, dir, arg string) {
	t.Helper()
	name, ref, ok := strings.Cut(arg, "=")
	i := strings.LastIndex(ref, ":")
	if !ok || i < 0 || strings.Contains(ref[i:], "/") {
		t.Fatalf("kustomize edit set image %q: want NAME=NEWNAME:NEWTAG", arg)
	}
	p := filepath.Join(dir, "kustomization.yaml")
	b, err := mem.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var k map[string]any
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	entry := map[string]any{"name": name, "newName": ref[:i], "newTag": ref[i+1:]}
	images, _ := k["images"].([]any)
	found := false
	for j, im := range images {
		if str(im, "name") == name {
			images[j], found = entry, true
		}
	}
	if !found {
		images = append(images, entry)
	}
	k["images"] = images
	if b, err = yaml.Marshal(k); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(p, b); err != nil {
		t.Fatal(err)
	}
}

// imagesOf renders dir and returns the image of every container.
func imagesOf(t *testing.T, mem filesys.FileSystem, dir string) []string {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	y, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	dec := yaml.NewDecoder(bytes.NewReader(y))
	for {
		var o obj
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, c := range list(o, "spec", "template", "spec", "containers") {
			out = append(out, str(c, "image"))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s renders no container", dir)
	}
	return out
}

// docSetImage is the `kustomize edit set image` command docs/deploy.md
// gives, with the directory it runs in.
var docSetImage = regexp.MustCompile(`cd (deploy/kubernetes/\S+) && kustomize edit set image (\S+=\S+)`)

// TestKustomizeImage: the manifests name the image by a placeholder that
// one `kustomize edit set image` in the base sets for every overlay, as
// docs/deploy.md says to after pushing it; untouched, they run the
// VERSION's release name, never the bare placeholder; an overlay's own
// entry for the base's rendered name wins for that overlay.
func TestKustomizeImage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := docSetImage.FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/deploy.md: no `cd deploy/kubernetes/… && kustomize edit set image NAME=…` command")
	}
	for _, want := range []string{"docker buildx build --platform linux/amd64,linux/arm64", "-t $REGISTRY/llmprobe:$TAG --push ."} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("docs/deploy.md: no %q", want)
		}
	}
	dirs := []string{"base", "fleet"}
	regions, err := filepath.Glob(filepath.Join(root, "deploy", "kubernetes", "regions", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regions {
		dirs = append(dirs, filepath.Join("regions", filepath.Base(r)))
	}
	every := func(t *testing.T, mem filesys.FileSystem, want func(dir string) string) {
		t.Helper()
		for _, d := range dirs {
			for _, got := range imagesOf(t, mem, filepath.Join("/kube", d)) {
				if w := want(d); got != w {
					t.Errorf("%s: image %q, want %q", d, got, w)
				}
			}
		}
	}
	release := "ghcr.io/llmprobe/llmprobe:" + version(t)

	t.Run("default", func(t *testing.T) {
		every(t, memKube(t), func(string) string { return release })
	})
	t.Run("set as the docs say", func(t *testing.T) {
		mem := memKube(t)
		const registry, tag = "registry.example.com/platform", "1.2.3-rc.1"
		arg := strings.NewReplacer("$REGISTRY", registry, "$TAG", tag).Replace(string(m[2]))
		dir := strings.TrimPrefix(string(m[1]), "deploy/kubernetes/")
		setImage(t, mem, filepath.Join("/kube", dir), arg)
		every(t, mem, func(string) string { return registry + "/llmprobe:" + tag })
	})
	t.Run("an overlay's own", func(t *testing.T) {
		mem := memKube(t)
		setImage(t, mem, "/kube/fleet", "ghcr.io/llmprobe/llmprobe=registry.example.com/fleet/llmprobe:2.0.0")
		every(t, mem, func(d string) string {
			if d == "base" {
				return release
			}
			return "registry.example.com/fleet/llmprobe:2.0.0"
		})
	})
}
