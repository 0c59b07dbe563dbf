package gopool

import (
	"sync"
	"testing"
	"time"
)

// Every function handed to Go runs, once, whether a goroutine waited for
// it or one was started; however many ran at once, no more than maxIdle
// goroutines stay waiting afterwards.
func TestGoRunsEveryFunctionAndKeepsFewWaiting(t *testing.T) {
	const n = 1000
	var (
		mu   sync.Mutex
		ran  = map[int]int{}
		wg   sync.WaitGroup
		gate = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		Go(func() {
			defer wg.Done()
			<-gate // all n run at once
			mu.Lock()
			ran[i]++
			mu.Unlock()
		})
	}
	close(gate)
	wg.Wait()
	for i := range n {
		if ran[i] != 1 {
			t.Fatalf("function %d ran %d times", i, ran[i])
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for idle.Load() != maxIdle {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines wait after a burst of %d; want %d", idle.Load(), n, maxIdle)
		}
		time.Sleep(time.Millisecond)
	}
	// The waiting ones take the next functions.
	done := make(chan struct{})
	Go(func() { close(done) })
	<-done
}

func BenchmarkGo(b *testing.B) {
	done := make(chan struct{})
	for b.Loop() {
		Go(func() { done <- struct{}{} })
		<-done
	}
}

func BenchmarkGoStatement(b *testing.B) {
	done := make(chan struct{})
	for b.Loop() {
		go func() { done <- struct{}{} }()
		<-done
	}
}
