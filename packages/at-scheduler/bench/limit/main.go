// Command limit is the at-scheduler bench's baseline: the API server's own limit for starting Ats, as a Go
// user would measure it with client-go. It makes only the two writes a start needs, in the controller's
// order and with the controller's bodies: the claim (a merge patch of the At's status subresource to
// RUNNING, conditional on the resourceVersion the caller read), then the pod create. Nothing is read,
// cached, retried or recorded as an Event; client-side rate limiting is off, so the API server alone sets
// the pace.
//
// Usage: limit <input.json>; the input names the kubeconfig, the namespace, the concurrency and the Ats
// (name, resourceVersion, scheduleMs, the claim's status and the pod to create, which the bench computes
// with the controller's claimStatus and buildPod; the claim's times are set when it is sent). Workers take
// the Ats in schedule order and wait until each is due. The output on stdout is one
// JSON object with every At's timestamps (epoch milliseconds) or the error that stopped it.
//
// With "watch" in the input it first starts client-go informers on what the controller caches (the
// namespace's Ats, and its pods with the controller's label selector) and waits for them to sync. Their
// events are received and cached, and nothing else: the API server serves the watches a controller
// needs, and the program pays for receiving them, but no decision is made from them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The controller's field manager: the API server tracks the same managed fields for both.
const fieldManager = "at-scheduler"

var atsResource = schema.GroupVersionResource{
	Group:    "cnat.programming-kubernetes.info",
	Version:  "v1alpha1",
	Resource: "ats",
}

type input struct {
	Kubeconfig  string `json:"kubeconfig"`
	Namespace   string `json:"namespace"`
	Concurrency int    `json:"concurrency"`
	// Watch: cache the Ats and the pods selected by PodSelector before starting (see the package comment).
	Watch       bool   `json:"watch"`
	PodSelector string `json:"podSelector"`
	Ats         []at   `json:"ats"`
}

type at struct {
	Name            string         `json:"name"`
	ResourceVersion string         `json:"resourceVersion"`
	ScheduleMs      float64        `json:"scheduleMs"`
	Claim           map[string]any `json:"claim"`
	Pod             corev1.Pod     `json:"pod"`
}

// result is one At's start; a timestamp stays 0 when the step it marks was not reached.
type result struct {
	Name             string  `json:"name"`
	DueMs            float64 `json:"dueMs"`
	ClaimSentMs      float64 `json:"claimSentMs"`
	ClaimAnsweredMs  float64 `json:"claimAnsweredMs"`
	CreateSentMs     float64 `json:"createSentMs"`
	CreateAnsweredMs float64 `json:"createAnsweredMs"`
	// Which write failed ("claim" or "create"), its HTTP status (0 without one) and message.
	FailedStep string `json:"failedStep,omitempty"`
	Code       int32  `json:"code,omitempty"`
	Error      string `json:"error,omitempty"`
}

type output struct {
	Concurrency int      `json:"concurrency"`
	Results     []result `json:"results"`
}

func nowMs() float64 { return float64(time.Now().UnixNano()) / 1e6 }

func fromMs(ms float64) time.Time { return time.Unix(0, int64(ms*1e6)) }

type starter struct {
	ats  dynamic.ResourceInterface
	pods typedcorev1.PodInterface
}

func (s *starter) start(ctx context.Context, a *at) result {
	r := result{Name: a.Name, DueMs: a.ScheduleMs}
	time.Sleep(time.Until(fromMs(a.ScheduleMs)))
	claim, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": a.ResourceVersion},
		"status":   claimedNow(a.Claim, time.Now()),
	})
	if err != nil {
		return r.failed("claim", err)
	}
	r.ClaimSentMs = nowMs()
	_, err = s.ats.Patch(ctx, a.Name, types.MergePatchType, claim,
		metav1.PatchOptions{FieldManager: fieldManager}, "status")
	r.ClaimAnsweredMs = nowMs()
	if err != nil {
		return r.failed("claim", err)
	}
	r.CreateSentMs = nowMs()
	_, err = s.pods.Create(ctx, &a.Pod, metav1.CreateOptions{FieldManager: fieldManager})
	r.CreateAnsweredMs = nowMs()
	if err != nil {
		return r.failed("create", err)
	}
	return r
}

// claimedNow is the controller's claim as if decided at now: startTime in milliseconds (JavaScript's
// toISOString) and each condition's lastTransitionTime in seconds (metav1.Time), as the controller writes them.
func claimedNow(claim map[string]any, now time.Time) map[string]any {
	status := make(map[string]any, len(claim))
	for k, v := range claim {
		status[k] = v
	}
	now = now.UTC()
	status["startTime"] = now.Format("2006-01-02T15:04:05.000Z07:00")
	if conditions, ok := claim["conditions"].([]any); ok {
		stamped := make([]any, len(conditions))
		for i, c := range conditions {
			condition := map[string]any{}
			for k, v := range c.(map[string]any) {
				condition[k] = v
			}
			condition["lastTransitionTime"] = now.Format(time.RFC3339)
			stamped[i] = condition
		}
		status["conditions"] = stamped
	}
	return status
}

func (r result) failed(step string, err error) result {
	r.FailedStep = step
	r.Error = err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		r.Code = status.Status().Code
	}
	return r
}

func run(path string) (*output, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if in.Concurrency < 1 {
		return nil, fmt.Errorf("concurrency must be at least 1, got %d", in.Concurrency)
	}
	config, err := clientcmd.BuildConfigFromFlags("", in.Kubeconfig)
	if err != nil {
		return nil, err
	}
	// A negative QPS turns client-go's token bucket off: the measure is the API server's, not the client's.
	config.QPS = -1
	config.UserAgent = "at-scheduler-bench-limit"
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	s := &starter{
		ats:  dyn.Resource(atsResource).Namespace(in.Namespace),
		pods: clientset.CoreV1().Pods(in.Namespace),
	}
	if in.Watch {
		stop := make(chan struct{})
		defer close(stop)
		if err := startInformers(dyn, clientset, in.Namespace, in.PodSelector, stop); err != nil {
			return nil, err
		}
	}

	sort.SliceStable(in.Ats, func(i, j int) bool { return in.Ats[i].ScheduleMs < in.Ats[j].ScheduleMs })
	results := make([]result, len(in.Ats))
	var next atomic.Int64
	var workers sync.WaitGroup
	ctx := context.Background()
	for range in.Concurrency {
		workers.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(in.Ats) {
					return
				}
				results[i] = s.start(ctx, &in.Ats[i])
			}
		})
	}
	workers.Wait()
	return &output{Concurrency: in.Concurrency, Results: results}, nil
}

// startInformers starts the caches a controller of Ats keeps and returns once both have synced.
func startInformers(dyn dynamic.Interface, clientset kubernetes.Interface, namespace, podSelector string, stop <-chan struct{}) error {
	atFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespace, nil)
	podFactory := informers.NewSharedInformerFactoryWithOptions(clientset, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(options *metav1.ListOptions) { options.LabelSelector = podSelector }))
	atInformer := atFactory.ForResource(atsResource).Informer()
	podInformer := podFactory.Core().V1().Pods().Informer()
	// A handler of each informer's events, as a controller registers one; this one decides nothing.
	for _, informer := range []cache.SharedIndexInformer{atInformer, podInformer} {
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{}); err != nil {
			return err
		}
	}
	atFactory.Start(stop)
	podFactory.Start(stop)
	if !cache.WaitForCacheSync(stop, atInformer.HasSynced, podInformer.HasSynced) {
		return errors.New("the informers did not sync")
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: limit <input.json>")
		os.Exit(2)
	}
	out, err := run(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		os.Exit(1)
	}
}
