package testenv

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AuditPolicy is the audit policy of a cluster started with Options.Audit: ConfigMaps' writes at
// RequestResponse level (the response's resourceVersion tells which line a write made), Secrets
// and everything else at Metadata level (matched by time), the RequestReceived stage left out.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources: [{group: "", resources: ["configmaps"]}]
- level: Metadata
`

// auditFlags writes AuditPolicy into dir and returns the API server flags that turn the audit
// log on (dir/audit.log, written as each request completes), added to flags.
func auditFlags(dir string, flags map[string]string) (map[string]string, string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(AuditPolicy), 0o600); err != nil {
		return nil, "", err
	}
	out := maps.Clone(flags)
	if out == nil {
		out = map[string]string{}
	}
	log := filepath.Join(dir, "audit.log")
	out["audit-policy-file"] = policy
	out["audit-log-path"] = log
	out["audit-log-mode"] = "blocking"
	return out, log, nil
}

// GrantEdit lets a user (kind "User") or a service account of ns (kind "ServiceAccount")
// read and write ConfigMaps and Secrets in ns, by a Role of its own (the "edit" ClusterRole gets
// its rules from kube-controller-manager's aggregation, which not every test control plane runs).
func (c *Cluster) GrantEdit(ctx context.Context, ns, kind, name string) error {
	role := "write-cm-secrets"
	_, err := c.Clientset.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	subject := rbacv1.Subject{Kind: kind, Name: name}
	if kind == rbacv1.UserKind {
		subject.APIGroup = rbacv1.GroupName
	} else {
		subject.Namespace = ns
	}
	_, err = c.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + "-" + strings.ToLower(kind) + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}, metav1.CreateOptions{})
	return err
}

// ServiceAccountClient creates the service account ns/name, able to write ConfigMaps and
// Secrets in ns (GrantEdit), and returns a clientset authenticated by a token of it
// (TokenRequest), sending userAgent.
func (c *Cluster) ServiceAccountClient(ctx context.Context, ns, name, userAgent string) (*kubernetes.Clientset, error) {
	cfg, err := c.ServiceAccountConfig(ctx, ns, name, userAgent)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// ServiceAccountConfig is ServiceAccountClient's configuration (to impersonate with, say).
func (c *Cluster) ServiceAccountConfig(ctx context.Context, ns, name, userAgent string) (*rest.Config, error) {
	_, err := c.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	if err := c.GrantEdit(ctx, ns, rbacv1.ServiceAccountKind, name); err != nil {
		return nil, err
	}
	secs := int64(3600)
	tr, err := c.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(c.RESTConfig)
	cfg.BearerToken = tr.Status.Token
	cfg.UserAgent = userAgent
	return cfg, nil
}

// UserClient adds a user called name (a client certificate, envtest's), able to write ConfigMaps
// and Secrets in ns (GrantEdit), and returns a clientset authenticated as it, sending userAgent.
func (c *Cluster) UserClient(ctx context.Context, ns, name, userAgent string) (*kubernetes.Clientset, error) {
	user, err := c.Env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	if err := c.GrantEdit(ctx, ns, rbacv1.UserKind, name); err != nil {
		return nil, err
	}
	cfg := user.Config()
	cfg.UserAgent = userAgent
	return kubernetes.NewForConfig(cfg)
}

// GrantImpersonate lets the service account ns/sa impersonate the user called user (the
// "impersonate" verb on that user, by a ClusterRole and ClusterRoleBinding of their own).
func (c *Cluster) GrantImpersonate(ctx context.Context, ns, sa, user string) error {
	name := "impersonate-" + user + "-" + ns + "-" + sa
	_, err := c.Clientset.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}, ResourceNames: []string{user}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	_, err = c.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{})
	return err
}

// ClientsetAs is the admin's clientset sending userAgent (a client the audit log tells apart).
func (c *Cluster) ClientsetAs(userAgent string) *kubernetes.Clientset {
	cfg := rest.CopyConfig(c.RESTConfig)
	cfg.UserAgent = userAgent
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: the poller polls as fast as it can
	return kubernetes.NewForConfigOrDie(cfg)
}
