package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// No Docker engine runs in CI. These tests check what can be checked without one: the Dockerfile
// builds the consumer with exactly the Makefile's go build line (which CI runs), that line stamps
// the version and yields a static, trimmed binary, the final stage is FROM scratch and non-root
// with an exec-form entrypoint, and hadolint has nothing to say. image_test.go builds and runs the
// same image with podman.

const dockerVersion = "deploy-test"

// dockerfile returns the Dockerfile with continuation lines joined.
func dockerfile(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n")
}

// words splits a shell command line into words, honouring single and double quotes.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// goBuild splits a command line into its environment assignments and the go build arguments
// after "go build", without "-o <file>".
func goBuild(t *testing.T, line string) (env, args []string) {
	t.Helper()
	w := words(line)
	i := slices.Index(w, "go")
	if i < 0 || i+1 >= len(w) || w[i+1] != "build" {
		t.Fatalf("no go build in %q", line)
	}
	for _, x := range w[:i] {
		if strings.Contains(x, "=") && !strings.HasPrefix(x, "--") {
			env = append(env, x)
		}
	}
	rest := w[i+2:]
	for j := 0; j < len(rest); j++ {
		if rest[j] == "-o" {
			j++
			continue
		}
		args = append(args, rest[j])
	}
	return env, args
}

func dockerGoBuild(t *testing.T) (env, args []string) {
	t.Helper()
	for _, l := range dockerfile(t) {
		if strings.HasPrefix(strings.TrimSpace(l), "RUN") && strings.Contains(l, "go build") {
			l = strings.NewReplacer("${VERSION}", dockerVersion, "$VERSION", dockerVersion).Replace(l)
			env, args = goBuild(t, l)
			// Cross-compilation settings exist only in the image build.
			env = slices.DeleteFunc(env, func(e string) bool {
				return strings.HasPrefix(e, "GOOS=") || strings.HasPrefix(e, "GOARCH=")
			})
			return env, args
		}
	}
	t.Fatal("no RUN ... go build in the Dockerfile")
	return nil, nil
}

// TestDockerfileMatchesMakefile: the image is built exactly as `make consumer` builds the binary.
func TestDockerfileMatchesMakefile(t *testing.T) {
	out, err := run(t, nil, "make", "-s", "-n", "-C", repo, "consumer", "VERSION="+dockerVersion)
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "go build") {
			line = l
		}
	}
	menv, margs := goBuild(t, line)
	denv, dargs := dockerGoBuild(t)
	if !slices.Equal(menv, denv) || !slices.Equal(margs, dargs) {
		t.Errorf("the Dockerfile's go build differs from the Makefile's consumer target:\nMakefile:   %q %q\nDockerfile: %q %q", menv, margs, denv, dargs)
	}
	if !slices.Contains(denv, "CGO_ENABLED=0") || !slices.Contains(dargs, "-trimpath") || dargs[len(dargs)-1] != "./cmd/consumer" {
		t.Errorf("go build: env %q args %q: want CGO_ENABLED=0, -trimpath, ./cmd/consumer", denv, dargs)
	}
}

var (
	consumerOnce sync.Once
	consumerBin  string
	consumerErr  error
)

// consumer builds the consumer with the Dockerfile's flags, once.
func consumer(t *testing.T) string {
	t.Helper()
	env, args := dockerGoBuild(t)
	consumerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "colline-deploy-test")
		if err != nil {
			consumerErr = err
			return
		}
		consumerBin = filepath.Join(dir, "colline-consumer")
		build := append([]string{"build", "-o", consumerBin}, args...)
		cmd := exec.Command("go", build...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			consumerErr = &cmdError{err: err, stderr: string(out)}
		}
	})
	if consumerErr != nil {
		t.Fatalf("building the consumer as the Dockerfile does: %v", consumerErr)
	}
	return consumerBin
}

// TestDockerfileBinary: the binary built as the Dockerfile builds it is static, trimmed and stamped.
func TestDockerfileBinary(t *testing.T) {
	bin := consumer(t)
	out, err := run(t, nil, "go", "version", "-m", bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"build\t-trimpath=true", "build\tCGO_ENABLED=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("go version -m does not show %q:\n%s", want, out)
		}
	}
	// With -trimpath the build info leaves -ldflags out: look for the stamped version itself.
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), dockerVersion) {
		t.Errorf("the binary does not contain the version %q given with -X main.version", dockerVersion)
	}
}

// consumerVariables returns the COLLINE_* variables the consumer reads, from its own usage text.
func consumerVariables(t *testing.T) []string {
	t.Helper()
	vars := usageVariables(usage(t))
	if len(vars) < 5 {
		t.Fatalf("found only %v in the consumer's usage", vars)
	}
	return vars
}

// usageVariables returns the COLLINE_* variables of an envconfig usage table.
func usageVariables(usage string) []string {
	var vars []string
	for _, m := range regexp.MustCompile(`(?m)^(COLLINE_[A-Z0-9_]+)\s`).FindAllStringSubmatch(usage, -1) {
		vars = append(vars, m[1])
	}
	return vars
}

// usage returns the consumer's usage text (it writes it to stderr and exits 2).
func usage(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(consumer(t), "-h")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestDockerfileImage checks the final stage: FROM scratch with deploy/image/rootfs's tree (the
// built binaries in it), non-root, exec-form entrypoint of the consumer, and the metrics port of the consumer's default COLLINE_HTTP_ADDR exposed.
func TestDockerfileImage(t *testing.T) {
	var final []string
	for _, l := range dockerfile(t) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "FROM ") {
			final = nil
		}
		if l != "" && !strings.HasPrefix(l, "#") {
			final = append(final, l)
		}
	}
	text := strings.Join(final, "\n")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM scratch$`),
		regexp.MustCompile(`(?m)^USER 65532:65532$`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/colline-consumer"\]$`),
		regexp.MustCompile(`(?m)^COPY --from=rootfs /rootfs/ /$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("final stage does not match %s:\n%s", want, text)
		}
	}
	m := regexp.MustCompile(`(?m)^COLLINE_HTTP_ADDR\s+\S+\s+:(\d+)\s`).FindStringSubmatch(usage(t))
	if m == nil {
		t.Fatalf("no COLLINE_HTTP_ADDR default in the usage:\n%s", usage(t))
	}
	if !regexp.MustCompile(`(?m)^EXPOSE ` + m[1] + `$`).MatchString(text) {
		t.Errorf("the final stage does not EXPOSE %s (the default of COLLINE_HTTP_ADDR)", m[1])
	}
}

func TestHadolint(t *testing.T) {
	hadolint := tool(t, "hadolint")
	out, err := run(t, nil, hadolint, filepath.Join(repo, "Dockerfile"))
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("hadolint: %v\n%s", err, out)
	}
}
