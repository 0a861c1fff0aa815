// Command fakekube is kubectl with a stand-in kubelet behind it, for the
// end-to-end test of examples/k8s-driver.sh: just the verbs the driver
// uses. `apply -f` decodes the Jobs strictly as batch/v1 (a field the API
// does not know is an error) and runs each new Job's one container as a pod
// would — its command in a fresh directory (the emptyDir at workingDir),
// the container's env over this process's, secretKeyRef read from this
// process's env (an optional key that is missing is left out) — all of
// them side by side, returning when they have ended. `get -f` prints the
// custom-columns the driver asks for, `delete job` forgets a Job.
//
// State lives in $FAKEKUBE_STATE: one file per Job (its status), each
// Job's output, and applied.log, one line per apply with the phases of the
// Jobs it started.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fakekube:", err)
		os.Exit(1)
	}
}

type args struct {
	verb, file, ns, output string
	ignoreNotFound         bool
	names                  []string
}

func parse(argv []string) args {
	var a args
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		next := func() string {
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return ""
		}
		switch {
		case s == "-f" || s == "--filename":
			a.file = next()
		case s == "-n" || s == "--namespace":
			a.ns = next()
		case s == "-o":
			a.output = next()
		case strings.HasPrefix(s, "-o="), strings.HasPrefix(s, "--output="):
			_, a.output, _ = strings.Cut(s, "=")
		case s == "--ignore-not-found":
			a.ignoreNotFound = true
		case strings.HasPrefix(s, "-"):
		case a.verb == "":
			a.verb = s
		default:
			a.names = append(a.names, s)
		}
	}
	return a
}

func run(argv []string) error {
	state := os.Getenv("FAKEKUBE_STATE")
	if state == "" {
		return errors.New("FAKEKUBE_STATE is not set")
	}
	a := parse(argv)
	switch a.verb {
	case "apply":
		return apply(state, a)
	case "get":
		return get(state, a)
	case "delete":
		// delete job NAME: the first name is the kind.
		if len(a.names) != 2 || a.names[0] != "job" {
			return fmt.Errorf("delete %v: only `delete job NAME`", a.names)
		}
		err := os.Remove(statusFile(state, ns(a.ns), a.names[1]))
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("job %q not found", a.names[1])
		}
		return err
	}
	return fmt.Errorf("verb %q: unknown to fakekube", a.verb)
}

func ns(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

func statusFile(state, namespace, name string) string {
	return filepath.Join(state, "jobs", namespace+"."+name)
}

func readJobs(file string) ([]batchv1.Job, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var jobs []batchv1.Job
	rd := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return jobs, nil
		}
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := sigsyaml.Unmarshal(doc, &obj); err != nil || len(obj) == 0 {
			continue
		}
		var job batchv1.Job
		if err := sigsyaml.UnmarshalStrict(doc, &job); err != nil {
			return nil, fmt.Errorf("decode a Job strictly: %w", err)
		}
		if job.APIVersion != "batch/v1" || job.Kind != "Job" {
			return nil, fmt.Errorf("%s/%s is not a batch/v1 Job", job.APIVersion, job.Kind)
		}
		jobs = append(jobs, job)
	}
}

func apply(state string, a args) error {
	jobs, err := readJobs(a.file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(state, "jobs"), 0o755); err != nil {
		return err
	}
	var started []string
	var wg sync.WaitGroup
	for _, j := range jobs {
		f := statusFile(state, ns(j.Namespace), j.Name)
		if _, err := os.Stat(f); err == nil {
			fmt.Printf("job.batch/%s unchanged\n", j.Name)
			continue
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil { // running
			return err
		}
		started = append(started, j.Labels["debussy.dev/phase"])
		fmt.Printf("job.batch/%s created\n", j.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := "succeeded"
			if err := pod(state, j); err != nil {
				status = "failed"
				fmt.Fprintf(os.Stderr, "fakekube: Job %s: %v\n", j.Name, err)
			}
			_ = os.WriteFile(f, []byte(status), 0o644)
		}()
	}
	wg.Wait()
	log, err := os.OpenFile(filepath.Join(state, "applied.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	_, err = fmt.Fprintln(log, strings.Join(started, " "))
	return err
}

// pod runs the Job's container once.
func pod(state string, job batchv1.Job) error {
	spec := job.Spec.Template.Spec
	if len(spec.Containers) != 1 || spec.RestartPolicy != "Never" || job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		return errors.New("not one container run once")
	}
	c := spec.Containers[0]
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			mounted = mounted || (m.Name == v.Name && v.EmptyDir != nil && m.MountPath == c.WorkingDir)
		}
	}
	if !mounted {
		return fmt.Errorf("the working directory %s is not an emptyDir", c.WorkingDir)
	}
	env := os.Environ()
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := os.LookupEnv(ref.Key)
			if !ok && (ref.Optional == nil || !*ref.Optional) {
				return fmt.Errorf("secret key %s is missing and not optional", ref.Key)
			}
			if ok {
				env = append(env, e.Name+"="+v)
			}
		default:
			return fmt.Errorf("env %s: a source fakekube does not know", e.Name)
		}
	}
	dir, err := os.MkdirTemp(state, "emptydir-")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Command[0], append(c.Command[1:], c.Args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := os.Create(filepath.Join(state, job.Name+".log"))
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// get prints, for each Job of the file, the custom columns asked for.
func get(state string, a args) error {
	jobs, err := readJobs(a.file)
	if err != nil {
		return err
	}
	spec, ok := strings.CutPrefix(a.output, "custom-columns=")
	if !ok {
		return fmt.Errorf("-o %s: only custom-columns", a.output)
	}
	var paths []string
	for _, col := range strings.Split(spec, ",") {
		_, p, _ := strings.Cut(col, ":")
		paths = append(paths, p)
	}
	for _, j := range jobs {
		data, err := os.ReadFile(statusFile(state, ns(j.Namespace), j.Name))
		if errors.Is(err, os.ErrNotExist) {
			if a.ignoreNotFound {
				continue
			}
			return fmt.Errorf("jobs.batch %q not found", j.Name)
		}
		if err != nil {
			return err
		}
		var row []string
		for _, p := range paths {
			v := "<none>"
			switch p {
			case ".metadata.namespace":
				v = ns(j.Namespace)
			case ".metadata.name":
				v = j.Name
			case ".status.succeeded":
				if string(data) == "succeeded" {
					v = "1"
				}
			case ".status.failed":
				if string(data) == "failed" {
					v = "1"
				}
			default:
				return fmt.Errorf("column %s: unknown to fakekube", p)
			}
			row = append(row, v)
		}
		fmt.Println(strings.Join(row, "   "))
	}
	return nil
}
