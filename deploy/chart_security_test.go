package deploy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The chart follows docs/security.md (issue 29): NetworkPolicies by default, no explorer without
// authentication beyond the cluster, the explorer's secrets all passed to it, the producers' keys
// mounted, the secure securityContext on every pod.

// policyFrom returns, per port name, the peers of a NetworkPolicy's ingress rules, as text.
func policyFrom(np *object) map[string]string {
	out := map[string]string{}
	for i := 0; get(np.Doc, "spec", "ingress", i) != nil; i++ {
		r := get(np.Doc, "spec", "ingress", i)
		out[fmt.Sprint(get(r, "ports", 0, "port"))] = fmt.Sprint(get(r, "from"))
	}
	return out
}

func TestChartNetworkPolicy(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want map[string]map[string]string // policy name -> port -> peers
	}{
		{"default", []string{"-f", filepath.Join(chart, "ci", "default-values.yaml")},
			map[string]map[string]string{"t-colline": {"metrics": "[map[namespaceSelector:map[]]]"}}},
		{"all on", []string{"-f", filepath.Join(chart, "ci", "all-on-values.yaml")},
			map[string]map[string]string{"t-colline": {"metrics": "[map[namespaceSelector:map[matchLabels:map[kubernetes.io/metadata.name:monitoring]]]]",
				"openlineage": "[map[namespaceSelector:map[]]]"}}},
		{"explorer with authentication: the cluster", []string{"-f", filepath.Join(chart, "ci", "ui-values.yaml")},
			map[string]map[string]string{"t-colline": {"metrics": "[map[namespaceSelector:map[]]]"}, "t-colline-ui": {"ui": "[map[namespaceSelector:map[]]]"}}},
		{"explorer without authentication: this namespace", []string{"-f", filepath.Join(chart, "ci", "default-values.yaml"), "--set", "ui.enabled=true"},
			map[string]map[string]string{"t-colline": {"metrics": "[map[namespaceSelector:map[]]]"}, "t-colline-ui": {"ui": "[map[podSelector:map[]]]"}}},
		{"off", []string{"-f", filepath.Join(chart, "ci", "default-values.yaml"), "--set", "networkPolicy.enabled=false"}, map[string]map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := render(t, kubeVersions[0], tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			objs := split(t, m)
			got := map[string]map[string]string{}
			for i := range objs {
				o := &objs[i]
				if o.Kind != "NetworkPolicy" {
					continue
				}
				got[o.Name] = policyFrom(o)
				if types := fmt.Sprint(get(o.Doc, "spec", "policyTypes")); types != "[Ingress]" {
					t.Errorf("%s: policyTypes %s, want [Ingress]", o.Name, types)
				}
				// the policy selects the pods of its Deployment, and only those
				d := findNamed(objs, "Deployment", o.Name)
				if d == nil {
					t.Errorf("%s: no Deployment of that name", o.Name)
					continue
				}
				labels := get(d.Doc, "spec", "template", "metadata", "labels").(map[string]any)
				for k, v := range get(o.Doc, "spec", "podSelector", "matchLabels").(map[string]any) {
					if labels[k] != v {
						t.Errorf("%s: podSelector %s=%v does not select its pods %v", o.Name, k, v, labels)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("NetworkPolicies %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestChartExplorerSecurity: every explorer pod runs with the secure securityContext; its
// analyzer token reaches it when it is its only secret (issue 29: the Secret was rendered but not
// mounted, so the explorer called the analyzer without it); ui.hosts becomes COLLINE_UI_HOSTS;
// an explorer without authentication is refused behind a LoadBalancer or NodePort, or opened to
// other namespaces, unless ui.auth.anonymous says so.
func TestChartExplorerSecurity(t *testing.T) {
	base := []string{"-f", filepath.Join(chart, "ci", "default-values.yaml"), "--set", "ui.enabled=true"}
	m, err := render(t, kubeVersions[0], append(slices.Clone(base), "--set", "ui.analyzerURL=http://a:8091", "--set", "ui.secret.analyzerToken=analyzer-token-0123")...)
	if err != nil {
		t.Fatal(err)
	}
	objs := split(t, m)
	d, sec := findNamed(objs, "Deployment", "t-colline-ui"), findNamed(objs, "Secret", "t-colline-ui")
	if d == nil || sec == nil || get(sec.Doc, "data", "COLLINE_UI_ANALYZER_TOKEN") == nil {
		t.Fatalf("the explorer's Deployment and its Secret with the analyzer token: %v %v", d != nil, sec != nil)
	}
	pod := get(d.Doc, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	if ref := get(c, "envFrom", 1, "secretRef", "name"); ref != "t-colline-ui" {
		t.Errorf("the explorer's Secret holding only the analyzer token is not passed to it (envFrom %v)", get(c, "envFrom"))
	}
	got := fmt.Sprintf("%v %v %v %v %v %v", get(pod, "securityContext", "runAsNonRoot"), get(pod, "securityContext", "seccompProfile", "type"), get(pod, "automountServiceAccountToken"),
		get(c, "securityContext", "readOnlyRootFilesystem"), get(c, "securityContext", "allowPrivilegeEscalation"), get(c, "securityContext", "capabilities", "drop"))
	if want := "true RuntimeDefault false true false [ALL]"; got != want {
		t.Errorf("the explorer's security context: %s, want %s", got, want)
	}
	m, err = render(t, kubeVersions[0], "-f", filepath.Join(chart, "ci", "ui-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if h := get(findNamed(split(t, m), "ConfigMap", "t-colline-ui").Doc, "data", "COLLINE_UI_HOSTS"); h != "lineage.example.com" {
		t.Errorf("COLLINE_UI_HOSTS = %v, want ui.hosts", h)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // "" renders
	}{
		{"LoadBalancer without authentication", []string{"--set", "ui.service.type=LoadBalancer"}, "ui.service.type LoadBalancer would expose an explorer without authentication beyond the cluster"},
		{"NodePort without authentication", []string{"--set", "ui.service.type=NodePort"}, "ui.service.type NodePort would expose"},
		{"open to other namespaces without authentication", []string{"--set", "networkPolicy.uiFrom[0].namespaceSelector.matchLabels.team=a"}, "networkPolicy.uiFrom opens an explorer without authentication"},
		{"LoadBalancer, anonymous on purpose", []string{"--set", "ui.service.type=LoadBalancer", "--set", "ui.auth.anonymous=true"}, ""},
		{"LoadBalancer with a token", []string{"--set", "ui.service.type=LoadBalancer", "--set", "ui.secret.token=0123456789abcdef0123"}, ""},
		{"ClusterIP without authentication", nil, ""},
	} {
		_, err := render(t, kubeVersions[0], append(slices.Clone(base), tc.args...)...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestChartOpenLineageKeys: the producers' keys file is mounted read-only from its Secret where
// COLLINE_OPENLINEAGE_HTTP_KEYS_FILE points. (Without keys the consumer warns at start:
// cmd/consumer's TestNotReadyWhileServicesAreDown; NOTES.txt says so too, which helm template does
// not render.)
func TestChartOpenLineageKeys(t *testing.T) {
	m, err := render(t, kubeVersions[0], "-f", filepath.Join(chart, "ci", "all-on-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := split(t, m)
	data := get(find(objs, "ConfigMap").Doc, "data")
	if get(data, "COLLINE_OPENLINEAGE_HTTP_KEYS_FILE") != "/etc/colline/openlineage-keys/producers" || get(data, "COLLINE_OPENLINEAGE_HTTP_MAX_CONCURRENT") != "32" ||
		get(data, "COLLINE_OPENLINEAGE_HTTP_TLS_CERT_FILE") != "/etc/colline/ca/tls.crt" {
		t.Errorf("ConfigMap: %v", data)
	}
	pod := get(find(objs, "Deployment").Doc, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	mounted := false
	for i := 0; get(c, "volumeMounts", i) != nil; i++ {
		if get(c, "volumeMounts", i, "mountPath") == "/etc/colline/openlineage-keys" && get(c, "volumeMounts", i, "readOnly") == true {
			name := get(c, "volumeMounts", i, "name")
			for j := 0; get(pod, "volumes", j) != nil; j++ {
				if get(pod, "volumes", j, "name") == name && get(pod, "volumes", j, "secret", "secretName") == "colline-openlineage-keys" &&
					get(pod, "volumes", j, "secret", "items", 0, "key") == "producers" {
					mounted = true
				}
			}
		}
	}
	if !mounted {
		t.Errorf("the keys Secret is not mounted read-only at /etc/colline/openlineage-keys: %v %v", get(c, "volumeMounts"), get(pod, "volumes"))
	}
}
