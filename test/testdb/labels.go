package testdb

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
)

// Every container and network the suites start carries three labels, so that what a run left
// behind is found exactly, and nothing else (a user's containers, another run's) is touched.
const (
	// LabelRole says what the container is for: "database", "e2e-pixgate", ...
	LabelRole = "org.pixgate.test"
	// LabelRun names the run: EnvRun when set (`make test` sets it and, after the suites, fails
	// when anything of its run is left), else the test binary's LabelProcess.
	LabelRun = "org.pixgate.test.run"
	// LabelProcess names the test binary that started it, for Main's last-resort removal.
	LabelProcess = "org.pixgate.test.process"
	// EnvRun is the environment variable that names the run.
	EnvRun = "PIXGATE_TEST_RUN"
)

// processLabel is this test binary's LabelProcess: its pid and the time it started.
var processLabel = fmt.Sprintf("%d-%s", os.Getpid(), runID)

// Labels are the labels of a container or network started for role.
func Labels(role string) map[string]string {
	run := os.Getenv(EnvRun)
	if run == "" {
		run = processLabel
	}
	return map[string]string{LabelRole: role, LabelRun: run, LabelProcess: processLabel}
}

// WithLabels labels a container started for role (Labels).
func WithLabels(role string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithLabels(Labels(role))
}

// NewNetwork creates a Docker network labelled for role (Labels), removed when t ends.
func NewNetwork(t testing.TB, role string) *testcontainers.DockerNetwork {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(Labels(role)))
	testcontainers.CleanupNetwork(t, nw)
	if err != nil {
		t.Fatalf("create the Docker network: %v", err)
	}
	return nw
}

// removeOwn force-removes every container, then every network, that this test binary started
// and has not removed yet, and answers what it removed. Main calls it when the binary is about
// to die without running its tests' cleanups (its timeout is near, or it was interrupted).
func removeOwn(ctx context.Context) ([]string, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	mine := client.Filters{}.Add("label", LabelProcess+"="+processLabel)
	ctrs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: mine})
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []string
	for _, c := range ctrs.Items {
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		removed = append(removed, "container "+c.ID[:12]+" ("+c.Image+", "+c.Labels[LabelRole]+")")
	}
	nws, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: mine})
	if err != nil {
		errs = append(errs, err.Error())
	}
	for _, n := range nws.Items {
		if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		removed = append(removed, "network "+n.Name)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return removed, nil
}
