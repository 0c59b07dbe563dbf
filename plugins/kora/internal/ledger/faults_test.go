package ledger

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/testenv"
)

func TestGarbageFileIsCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	junk := make([]byte, 64<<10)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(junk)
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{DSN: "sqlite:" + path})
	if err == nil {
		defer s.Close()
		err = s.AppendInference(context.Background(), Inference{Model: "m", Route: "r"})
	}
	if KindOf(err) != KindCorrupt {
		t.Errorf("a file of random bytes: %v, want %s", err, KindCorrupt)
	}
	if !strings.Contains(fmt.Sprint(err), "kora: ledger (sqlite)") {
		t.Errorf("error %q does not say who failed", err)
	}
}

func TestDamagedPagesAreCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	s, err := Open(context.Background(), Options{DSN: "sqlite:" + path})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := range n {
		rec := Inference{Time: day.Add(time.Duration(i) * time.Second), SessionID: fmt.Sprint(i), Model: "m", Route: "r", Reason: strings.Repeat("x", 1000)}
		if err := s.AppendInference(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	s.Close() // checkpoints the WAL into the file

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the WAL is still there after Close; the damage below would miss the data")
	}
	// Damage the middle half of the file, page-aligned.
	junk := bytes.Repeat([]byte{0xAB}, int(fi.Size()/2)&^4095)
	if _, err := f.WriteAt(junk, (fi.Size()/4)&^4095); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s, err = Open(context.Background(), Options{DSN: "sqlite:" + path})
	if err != nil {
		if KindOf(err) != KindCorrupt {
			t.Fatalf("Open of a damaged database = %v, want %s", err, KindCorrupt)
		}
		return
	}
	defer s.Close()
	ctx := context.Background()
	_, err = s.Burn(ctx, day.Add(time.Millisecond))
	if KindOf(err) != KindCorrupt {
		t.Errorf("burn over the damaged details = %v, want %s", err, KindCorrupt)
	}
	_, _, err = s.RecentInferences(ctx, n)
	if KindOf(err) != KindCorrupt {
		t.Errorf("recent inferences through the damage = %v, want %s", err, KindCorrupt)
	}
	err = s.ExportInferences(ctx, time.Time{}, func(Inference) error { return nil })
	if KindOf(err) != KindCorrupt {
		t.Errorf("export through the damage = %v, want %s", err, KindCorrupt)
	}
	// The day totals may sit on undamaged pages; either way no other kind.
	if _, err := s.Burn(ctx, time.Time{}); err != nil && KindOf(err) != KindCorrupt {
		t.Errorf("burn over all time = %v, want success or %s", err, KindCorrupt)
	}
	if err := s.AppendInference(ctx, Inference{Model: "m", Route: "r"}); err != nil && KindOf(err) != KindCorrupt {
		t.Errorf("append = %v, want success or %s", err, KindCorrupt)
	}
}

// fillUntilFull appends bulky records until one fails, returning how many
// were acknowledged and the failure.
func fillUntilFull(t *testing.T, s Store, limit int) (int, error) {
	t.Helper()
	for i := range limit {
		rec := Inference{SessionID: fmt.Sprint(i), Model: "m", Route: "r", Reason: strings.Repeat("y", 2000)}
		if err := s.AppendInference(context.Background(), rec); err != nil {
			return i, err
		}
	}
	t.Fatalf("%d appends and the database is still not full", limit)
	return 0, nil
}

// checkIntact requires exactly the first n records, whole, and totals
// that agree.
func checkIntact(t *testing.T, s *sqlStore, n int) {
	t.Helper()
	seen := 0
	err := s.ExportInferences(context.Background(), time.Time{}, func(r Inference) error {
		if r.SessionID != fmt.Sprint(seen) || len(r.Reason) != 2000 {
			return fmt.Errorf("record %d read back as %s with %d bytes of reason", seen, r.SessionID, len(r.Reason))
		}
		seen++
		return nil
	})
	if err != nil || seen != n {
		t.Fatalf("after the disk filled: %d records, %v; want %d", seen, err, n)
	}
	if _, total, err := s.RecentInferences(context.Background(), 0); err != nil || total != int64(n) {
		t.Errorf("total %d, %v; want %d", total, err, n)
	}
	checkTotals(t, s.db)
}

func TestFullDatabase(t *testing.T) {
	t.Run("max_page_count", func(t *testing.T) {
		s := openTest(t, Options{})
		s.db.SetMaxOpenConns(1)
		var pages int
		if err := s.db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages+40)); err != nil {
			t.Fatal(err)
		}
		acked, err := fillUntilFull(t, s, 10_000)
		if KindOf(err) != KindFull {
			t.Fatalf("append past max_page_count = %v, want %s", err, KindFull)
		}
		checkIntact(t, s, acked)
		if _, err := s.db.Exec("PRAGMA max_page_count = 1000000"); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendInference(context.Background(), Inference{SessionID: fmt.Sprint(acked), Model: "m", Route: "r", Reason: strings.Repeat("y", 2000)}); err != nil {
			t.Fatalf("append once there is room again: %v", err)
		}
		checkIntact(t, s, acked+1)
	})
	t.Run("tiny file system", func(t *testing.T) {
		dir := mountTmpfs(t, "size=1m")
		filler := filepath.Join(dir, "filler")
		if err := os.WriteFile(filler, make([]byte, 200<<10), 0o600); err != nil {
			t.Fatal(err)
		}
		s := openTest(t, Options{DSN: "sqlite:" + filepath.Join(dir, "ledger.db")})
		acked, err := fillUntilFull(t, s, 10_000)
		if KindOf(err) != KindFull {
			t.Fatalf("append on a full file system = %v, want %s", err, KindFull)
		}
		checkIntact(t, s, acked)
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendInference(context.Background(), Inference{SessionID: fmt.Sprint(acked), Model: "m", Route: "r", Reason: strings.Repeat("y", 2000)}); err != nil {
			t.Fatalf("append once there is room again: %v", err)
		}
		checkIntact(t, s, acked+1)
	})
}

// mountTmpfs mounts a tmpfs for the test, or skips saying why it cannot.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.SkipUnlessRun(t, testenv.NoTmpfs, testenv.AsRoot("./plugins/kora/internal/ledger/..."), fmt.Sprintf("%v: %s", err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestReadOnlyDatabase uses a read-only mount, since root ignores file
// permissions.
func TestReadOnlyDatabase(t *testing.T) {
	dir := mountTmpfs(t, "size=8m")
	path := filepath.Join(dir, "ledger.db")
	s, err := Open(context.Background(), Options{DSN: "sqlite:" + path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendInference(context.Background(), Inference{Model: "m", Route: "r", CostUSD: 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		testenv.SkipUnlessRun(t, "cannot remount a tmpfs read-only here", testenv.AsRoot("./plugins/kora/internal/ledger/..."), fmt.Sprintf("%v: %s", err, out))
	}

	// Reports still answer; appends are refused as read-only.
	s, err = Open(context.Background(), Options{DSN: "sqlite:" + path})
	if err != nil {
		t.Fatalf("Open on a read-only mount = %v", err)
	}
	defer s.Close()
	err = s.AppendInference(context.Background(), Inference{Model: "m", Route: "r"})
	if KindOf(err) != KindReadOnly {
		t.Errorf("append on a read-only mount = %v, want %s", err, KindReadOnly)
	}
	err = s.AppendToolCall(context.Background(), ToolCall{Name: "n"})
	if KindOf(err) != KindReadOnly {
		t.Errorf("tool call append on a read-only mount = %v, want %s", err, KindReadOnly)
	}
	g, err := s.Burn(context.Background(), time.Time{})
	if err != nil || len(g) != 1 || g[0].CostNanoUSD != 1e9 {
		t.Errorf("burn on a read-only mount = %+v, %v", g, err)
	}
	if _, total, err := s.RecentInferences(context.Background(), 5); err != nil || total != 1 {
		t.Errorf("recent on a read-only mount: total %d, %v", total, err)
	}
}

// TestReadOnlyWithPendingWAL: a read-only database whose WAL still holds
// commits cannot be read without writing the -shm file, so Open refuses
// it as read-only rather than show stale totals.
func TestReadOnlyWithPendingWAL(t *testing.T) {
	dir := mountTmpfs(t, "size=8m")
	path := filepath.Join(dir, "ledger.db")
	s := openTest(t, Options{DSN: "sqlite:" + path})
	if err := s.AppendInference(context.Background(), Inference{Model: "m", Route: "r"}); err != nil {
		t.Fatal(err)
	}
	// Copy the live file and its WAL aside, as a crash would leave them.
	dst := filepath.Join(dir, "copy")
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "ledger.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		testenv.SkipUnlessRun(t, "cannot remount a tmpfs read-only here", testenv.AsRoot("./plugins/kora/internal/ledger/..."), fmt.Sprintf("%v: %s", err, out))
	}
	_, err := Open(context.Background(), Options{DSN: "sqlite:" + filepath.Join(dst, "ledger.db")})
	if KindOf(err) != KindReadOnly {
		t.Errorf("Open of a read-only database with a pending WAL = %v, want %s", err, KindReadOnly)
	}
}
