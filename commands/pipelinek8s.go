package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/secrets"
)

// The batch/v1 Job debussy writes: only the fields it sets, named as the
// Kubernetes API names them (the tests decode them strictly with k8s.io/api).
type (
	k8sJob struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   k8sMeta    `yaml:"metadata"`
		Spec       k8sJobSpec `yaml:"spec"`
	}
	k8sMeta struct {
		Name        string            `yaml:"name,omitempty"`
		Namespace   string            `yaml:"namespace,omitempty"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations,omitempty"`
	}
	k8sJobSpec struct {
		BackoffLimit            int         `yaml:"backoffLimit"`
		ActiveDeadlineSeconds   int64       `yaml:"activeDeadlineSeconds"`
		TTLSecondsAfterFinished int64       `yaml:"ttlSecondsAfterFinished"`
		Template                k8sTemplate `yaml:"template"`
	}
	k8sTemplate struct {
		Metadata k8sMeta    `yaml:"metadata"`
		Spec     k8sPodSpec `yaml:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy   string         `yaml:"restartPolicy"`
		SecurityContext k8sPodSecurity `yaml:"securityContext"`
		Containers      []k8sContainer `yaml:"containers"`
		Volumes         []k8sVolume    `yaml:"volumes"`
	}
	// k8sPodSecurity runs the pod as the image's user (never root: claude
	// refuses to bypass permissions as root), and gives the emptyDir to
	// its group (fsGroup), so the clone in it is the user's to write.
	k8sPodSecurity struct {
		RunAsNonRoot   bool       `yaml:"runAsNonRoot"`
		RunAsUser      int64      `yaml:"runAsUser"`
		RunAsGroup     int64      `yaml:"runAsGroup"`
		FSGroup        int64      `yaml:"fsGroup"`
		SeccompProfile k8sSeccomp `yaml:"seccompProfile"`
	}
	k8sSeccomp struct {
		Type string `yaml:"type"`
	}
	// k8sContainerSecurity is what the restricted Pod Security Standard
	// asks of a container, which git, debussy and claude do not need.
	k8sContainerSecurity struct {
		AllowPrivilegeEscalation bool    `yaml:"allowPrivilegeEscalation"`
		Capabilities             k8sCaps `yaml:"capabilities"`
	}
	k8sCaps struct {
		Drop []string `yaml:"drop,flow"`
	}
	k8sContainer struct {
		Name            string               `yaml:"name"`
		Image           string               `yaml:"image"`
		WorkingDir      string               `yaml:"workingDir"`
		Command         []string             `yaml:"command"`
		Env             []k8sEnv             `yaml:"env"`
		Resources       k8sResources         `yaml:"resources"`
		SecurityContext k8sContainerSecurity `yaml:"securityContext"`
		VolumeMounts    []k8sMount           `yaml:"volumeMounts"`
	}
	k8sEnv struct {
		Name      string      `yaml:"name"`
		Value     string      `yaml:"value,omitempty"`
		ValueFrom *k8sEnvFrom `yaml:"valueFrom,omitempty"`
	}
	k8sEnvFrom struct {
		SecretKeyRef k8sSecretKey `yaml:"secretKeyRef"`
	}
	k8sSecretKey struct {
		Name     string `yaml:"name"`
		Key      string `yaml:"key"`
		Optional bool   `yaml:"optional"`
	}
	k8sResources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	k8sMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	k8sVolume struct {
		Name     string   `yaml:"name"`
		EmptyDir struct{} `yaml:"emptyDir"`
	}
)

// k8sWorkDir is where the emptyDir is mounted and the repository cloned.
const k8sWorkDir = "/workspace"

// k8sScript is every Job's command: wait out an account hold, clone the
// branch into the emptyDir (the working directory), run the phase. The
// values come from the environment, so nothing here needs quoting.
const k8sScript = `set -eu
now=$(date +%s)
if [ "$now" -lt "${DEBUSSY_NOT_BEFORE:-0}" ]; then
  echo "debussy: the account's usage limit holds until $DEBUSSY_NOT_BEFORE (epoch): waiting"
  sleep $((DEBUSSY_NOT_BEFORE - now))
fi
if [ -n "${DEBUSSY_PUSH_TOKEN:-}" ]; then
  set -- -c 'credential.helper=!f() { echo "username=${DEBUSSY_PUSH_USER:-x-access-token}"; echo "password=$DEBUSSY_PUSH_TOKEN"; }; f'
fi
# An emptyDir holds nothing yet; one an init container filled is used as is.
if [ ! -e .git ]; then
  git clone --quiet "$@" --branch "$DEBUSSY_REF" -- "$DEBUSSY_REPO" .
fi
exec debussy run "$DEBUSSY_PLAN" --only "$DEBUSSY_PHASE" --base deps --push origin
`

func writeK8s(w io.Writer, ps *planState, ready []*plans.Phase, opts pipelineOptions, timeout timeoutChoice, h *remote.Hold) error {
	planID := plans.ID(ps.rel)
	base := gitcommit.Short(ps.head)
	// Nothing ready is no output at all (the note goes to stderr): every
	// document written is a Job, for kubectl and for strict decoders alike.
	if len(ready) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(header(ps, formatK8s, h))
	fmt.Fprintf(&b, "# %d Job(s) for the phases ready now; apply them, wait, collect, ask again\n# (examples/k8s-driver.sh).\n", len(ready))
	fmt.Fprintf(&b, "# Image %s (--image), run as uid %d.\n# Each Job may run %s (%s).\n", opts.Image, imageUID, shortDuration(timeout.d), timeout.why)
	deadline := int64(timeout.d.Seconds())
	notBefore := ""
	if h != nil {
		notBefore = strconv.FormatInt(h.Resets.Unix(), 10)
		if wait := int64(time.Until(h.Resets).Seconds()); wait > 0 {
			deadline += wait // the wait is not the phase's time
		}
	}
	for i, ph := range ready {
		labels := map[string]string{
			"app.kubernetes.io/managed-by": "debussy",
			"debussy.dev/plan":             labelValue(planID),
			"debussy.dev/phase":            labelValue(ph.ID),
			"debussy.dev/base":             base,
		}
		env := []k8sEnv{
			{Name: "DEBUSSY_REPO", Value: secrets.Redact(opts.RepoURL)},
			{Name: "DEBUSSY_REF", Value: opts.Ref},
			{Name: "DEBUSSY_PLAN", Value: secrets.Redact(ps.rel)},
			{Name: "DEBUSSY_PHASE", Value: ph.ID},
		}
		if notBefore != "" {
			env = append(env, k8sEnv{Name: "DEBUSSY_NOT_BEFORE", Value: notBefore})
		}
		for _, key := range []string{"CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_API_KEY", pushTokenVar} {
			env = append(env, k8sEnv{Name: key, ValueFrom: &k8sEnvFrom{SecretKeyRef: k8sSecretKey{Name: opts.Secret, Key: key, Optional: true}}})
		}
		env = append(env,
			k8sEnv{Name: "GIT_AUTHOR_NAME", Value: "debussy"}, k8sEnv{Name: "GIT_AUTHOR_EMAIL", Value: "debussy@localhost"},
			k8sEnv{Name: "GIT_COMMITTER_NAME", Value: "debussy"}, k8sEnv{Name: "GIT_COMMITTER_EMAIL", Value: "debussy@localhost"})
		job := k8sJob{
			APIVersion: "batch/v1", Kind: "Job",
			Metadata: k8sMeta{Name: k8sJobName(planID, ph.ID, base), Namespace: opts.Namespace, Labels: labels,
				Annotations: map[string]string{"debussy.dev/title": secrets.Redact(ph.Title)}},
			Spec: k8sJobSpec{
				BackoffLimit: 0, ActiveDeadlineSeconds: deadline, TTLSecondsAfterFinished: int64(opts.TTL.Seconds()),
				Template: k8sTemplate{
					Metadata: k8sMeta{Labels: labels},
					Spec: k8sPodSpec{
						RestartPolicy: "Never",
						SecurityContext: k8sPodSecurity{RunAsNonRoot: true, RunAsUser: imageUID, RunAsGroup: imageGID, FSGroup: imageGID,
							SeccompProfile: k8sSeccomp{Type: "RuntimeDefault"}},
						Containers: []k8sContainer{{
							Name: "debussy", Image: opts.Image, WorkingDir: k8sWorkDir,
							Command: []string{"/bin/sh", "-c", k8sScript},
							Env:     env,
							Resources: k8sResources{
								Requests: map[string]string{"cpu": opts.CPU, "memory": opts.Memory},
								Limits:   map[string]string{"cpu": opts.CPULimit, "memory": opts.Memory},
							},
							SecurityContext: k8sContainerSecurity{Capabilities: k8sCaps{Drop: []string{"ALL"}}},
							VolumeMounts:    []k8sMount{{Name: "workspace", MountPath: k8sWorkDir}},
						}},
						Volumes: []k8sVolume{{Name: "workspace"}},
					},
				},
			},
		}
		out, err := yaml.MarshalWithOptions(job, yaml.Indent(2), yaml.IndentSequence(true), yaml.UseLiteralStyleIfMultiline(true))
		if err != nil {
			return fmt.Errorf("encode the Job of phase %s: %w", ph.ID, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(out)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// k8sJobName is a Job name (a DNS label, at most 63 characters) for a
// phase of a plan at a base commit: a new base, a new Job, so a wave after
// a collect never collides with the Jobs of the one before.
func k8sJobName(planID, phaseID, base string) string {
	tail := "-" + dnsLabel(phaseID) + "-" + base
	head := "debussy-" + dnsLabel(planID)
	if room := 63 - len(tail); len(head) > room {
		head = strings.TrimRight(head[:room], "-")
	}
	return head + tail
}

// dnsLabel is plans.Slug, never empty.
func dnsLabel(s string) string {
	if out := plans.Slug(s); out != "" {
		return out
	}
	return "x"
}

// labelValue fits s to a label value: at most 63 of [A-Za-z0-9._-],
// beginning and ending with an alphanumeric.
func labelValue(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > 63 {
		out = out[:63]
	}
	return strings.Trim(out, "._-")
}
