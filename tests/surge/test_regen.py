#!/usr/bin/env python3
"""Regenerating SURGE's references on the shipped data, through the real
surgebox CLI and an embedded daemon, inside the unshare wrapper.

  test_regen.py BIN_DIR DATA_DIR slice   bounded slice for CI (label surge-data)
  test_regen.py BIN_DIR DATA_DIR full    every subset, the issue's targets (label long)
  test_regen.py BIN_DIR DATA_DIR bins    SURGE's CPU-time bins on the timed TC items up to 10 cities

Thresholds are the targets stated for this machine's Debian 12 toolchains;
where a toolchain is absent the item must be reported as missing_toolchain,
never guessed.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


SOCK = None  # the private daemon's socket (main)


def start_daemon(bin_dir, out):
    """A private daemon for the whole case: its own socket and compile cache
    (the machine's shared ones stay untouched), and the build's surge-2025
    profile when profiles.surge-2025 made it."""
    global SOCK
    SOCK = os.path.join(out, "d.sock")
    cmd = [os.path.join(bin_dir, "surgeboxd"), "--socket", SOCK, "--cache-dir", os.path.join(out, "cache"),
           "--jobs", str(os.cpu_count() or 2)]
    if profile_ready(bin_dir):
        cmd += ["--profiles-dir", os.environ["SURGEBOX_PROFILES"]]
    d = subprocess.Popen(cmd)
    for _ in range(1200):  # toolchain detection takes a while on a loaded machine
        if os.path.exists(SOCK) or d.poll() is not None:
            break
        time.sleep(0.5)
    if not os.path.exists(SOCK):
        print("FAIL: the private daemon did not start")
        sys.exit(1)
    return d


def regen(bin_dir, data, out, subsets, only=None, extra=()):
    cmd = [os.path.join(bin_dir, "surgebox"), "regen", "--socket", SOCK, "--no-autostart", "--data", data,
           "--subset", subsets, "--out", out, "--summary", os.path.join(out, "summary.json")] + list(extra)
    if only:
        cmd += ["--only", only]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    print(p.stdout[-6000:])
    if p.returncode != 0:
        print(p.stderr[-3000:])
    check(p.returncode == 0, f"regen exit code {p.returncode}")
    return json.load(open(os.path.join(out, "summary.json")))


def items(out, subset):
    return json.load(open(os.path.join(out, subset + ".json")))


def toolchains(bin_dir, out):
    p = subprocess.run([os.path.join(bin_dir, "surgebox"), "--socket", SOCK, "--no-autostart", "toolchains", "--json"],
                       capture_output=True, text=True, timeout=600)
    return {t["name"]: t for t in json.loads(p.stdout)["toolchains"] if t.get("available")}


def common_checks(out, summary):
    for subset, s in summary.items():
        for it in items(out, subset):
            e = it.get("exec")
            if e is None:
                continue
            check(e.get("complete") is True, f"{subset}: exec incomplete")
            check(e["status"] != "internal_error", f"{subset}: internal_error {e.get('error')}")
            if not e["regenerated"]:
                check(e["class"] in ("missing_toolchain", "timeout", "other"), f"{subset}: unexplained non-run {e}")
            check("gt_published" in it, f"{subset}: gt_published kept")


def slice_case(bin_dir, data, out):
    tcs = toolchains(bin_dir, out)
    s = regen(bin_dir, data, out, "dr,bg,cl,rl,sc,fl", only=",".join(str(i) for i in range(0, 60)))
    common_checks(out, s)
    dr, bg = s["dr"], s["bg"]
    check(dr["ran"] == 60, f"dr slice ran {dr['ran']}")
    check(dr["exact"] >= 42, f"dr slice exact {dr['exact']}/60 (full-run target 146/200)")
    check(dr["normalized"] >= dr["exact"], "normalized >= exact")
    java = bg["by"].get("java")
    if java:  # the full run's target is >= 49/51; both known misses fall in this slice
        check(java["exact"] >= java["ran"] - 2, f"bg java {java['exact']}/{java['ran']}")
    py = bg["by"].get("python3")
    if py and "python3.8" in tcs:
        check(py["exact"] == py["ran"], f"bg python with 3.8: {py['exact']}/{py['ran']}")
    cpp = bg["by"].get("cpp")
    if cpp:
        check(cpp["jaccard_mean"] >= 0.93, f"bg cpp jaccard {cpp['jaccard_mean']}")
    check(s["cl"]["normalized"] == s["cl"]["ran"] == 60, f"cl slice {s['cl']}")
    rl = s["rl"]
    check(rl["normalized"] == rl["ran"] == 60, f"rl {rl['normalized']}/{rl['ran']} (target 60/60)")
    check(s["sc"]["normalized"] >= 45, f"sc slice stripped-or-N6 {s['sc']['normalized']}/60")
    fl = s["fl"]
    if "lean4" not in tcs:  # reported as missing, never guessed
        check(fl["ran"] == 0 and fl["missing_toolchain"] == 60, f"fl without lean4: {fl}")
    # resumable: a second run over the same --out runs nothing again
    s2 = regen(bin_dir, data, out, "dr", only="0,1,2")
    check(s2["dr"]["exact"] == dr["exact"], "resume keeps results")


def profile_ready(bin_dir):
    """Points the embedded daemon at the build's surge-2025 profile (made by
    the profiles.surge-2025 test) unless SURGEBOX_PROFILES says otherwise."""
    d = os.environ.get("SURGEBOX_PROFILES") or os.path.join(bin_dir, "..", "test-profiles")
    if not os.path.exists(os.path.join(d, "surge-2025", "manifest.json")):
        return False
    os.environ["SURGEBOX_PROFILES"] = os.path.abspath(d)
    return True


TC_BINS_ONLY = list(range(0, 27))  # 3-, 5- and 10-city TSP: up to ~1.5 s each


def bins_case(bin_dir, data, out):
    """SURGE's CPU-time bins on the timed TC items up to 10 cities, two
    repeats: the span SURGE timed (the solver) puts every 3- and 5-city item
    below 1 ms as SURGE's did (the whole script takes ~15 ms). Judged on
    times calibrated to SURGE's machine (the median ratio of the 10-city
    items', each calibrated by the others): every item is in SURGE's bin or
    flagged, here and on a machine twice as fast and twice as slow
    (--time-scale), whatever this machine's speed and load."""
    prof = profile_ready(bin_dir)
    print("surge-2025 profile:", "yes" if prof else "no (timed items run on the host's python3)")
    s = regen(bin_dir, data, out, "tc", only=",".join(map(str, TC_BINS_ONLY)), extra=["--repeat", "2"])
    check(s["tc"]["ran"] == len(TC_BINS_ONLY), f"tc ran {s['tc']['ran']}")
    for it in items(out, "tc")[:27]:
        e = it["exec"]
        check(len(e.get("inproc_cpu_s_runs", [])) == 2, f"two timed repeats recorded: {e.get('inproc_cpu_s_runs')}")
    factors = {}
    for scale in ("1", "0.5", "2"):
        argv = [os.path.join(bin_dir, "surgebox"), "bins", "--data", os.path.join(out, "tc.json"), "--time-scale", scale]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        print(p.stdout)
        check(p.returncode == 0 and "calibration: our time / SURGE's over the 10 items" in p.stdout,
              f"bins --time-scale {scale} prints the calibration: {p.stdout[-400:]} {p.stderr}")
        p = subprocess.run(argv + ["--json"], capture_output=True, text=True, timeout=60)
        b = json.loads(p.stdout)
        ag, cal = b["agreement"], b["calibration"]
        check(ag["items"] == len(TC_BINS_ONLY) and ag["calibrated"] and cal["applied"] and cal["items"] == 10,
              f"x{scale}: calibrated over the 10-city items, {ag['items']} compared: {cal}")
        factors[scale] = cal["factor"]
        check(cal["spread"][0] <= cal["factor"] <= cal["spread"][1], f"x{scale}: factor within its spread {cal}")
        # the flags' band: every single run of the 10-city items, never narrower than the medians' quartiles
        runs = [x / float(it["custom_features"]["time"].split()[0]) * float(scale)
                for it in items(out, "tc")[17:27] for x in it["exec"]["inproc_cpu_s_runs"]]
        check(abs(cal["runs"][0] - min(runs)) < 1e-4 * min(runs) and abs(cal["runs"][1] - max(runs)) < 1e-4 * max(runs)
              and cal["runs"][0] <= cal["spread"][0] and cal["spread"][1] <= cal["runs"][1],
              f"x{scale}: the runs' range is the fastest and slowest run: {cal['runs']} against {min(runs)}-{max(runs)}")
        check(len(b["items"]) == len(TC_BINS_ONLY) and all(
            x["raw_s"] is not None and x["calibrated_s"] is not None and x["raw_bin"] is not None and
            x["calibrated_bin"] is not None for x in b["items"]), f"x{scale}: raw and calibrated time and bin per item")
        small = [i for i in range(0, 17) if i not in ag["same_bin"]]
        check(not small, f"x{scale}: 3- and 5-city items outside SURGE's bin (< 1 ms): {small}")
        check(not ag["different"], f"x{scale}: items in another bin than SURGE's, not flagged: {ag['different']}")
    # the simulated machines really were 2x apart: the calibration absorbed it
    check(abs(factors["2"] / factors["1"] - 2) < 1e-6 and abs(factors["0.5"] / factors["1"] - 0.5) < 1e-6,
          f"calibration factors follow the machine's speed: {factors}")


def full_case(bin_dir, data, out):
    tcs = toolchains(bin_dir, out)
    s = regen(bin_dir, data, out, "all", extra=["--repeat", "2"])
    common_checks(out, s)
    check(s["dr"]["exact"] >= 146, f"DR exact {s['dr']['exact']}/200 (target >= 146)")
    bg = s["bg"]["by"]
    check(bg["java"]["exact"] >= 49, f"BG java {bg['java']['exact']}/51 (target >= 49)")
    if "python3.8" in tcs:
        check(bg["python3"]["exact"] == 45, f"BG python {bg['python3']['exact']}/45 with Python 3.8")
    check(bg["cpp"]["jaccard_mean"] >= 0.95, f"BG cpp Jaccard {bg['cpp']['jaccard_mean']} (target >= 0.95)")
    tc_det = [it for it in items(out, "tc") if it["exec"].get("deterministic")]
    tc_ok = [it for it in tc_det if it["exec"]["matched"] != "no"]
    check(len(tc_ok) >= 126, f"TC deterministic items matching {len(tc_ok)} (target 126)")
    check(s["sc"]["normalized"] >= 120, f"SC {s['sc']['normalized']}/150 (target >= 120)")
    check(s["cl"]["normalized"] == 150, f"CL {s['cl']['normalized']}/150")
    check(s["rl"]["normalized"] == 60, f"RL {s['rl']['normalized']}/60")
    ml = s["ml"]
    check(ml["normalized"] == ml["ran"], f"ML every runnable item: {ml['normalized']}/{ml['ran']}")


def main():
    bin_dir, data, case = sys.argv[1:4]
    data = os.environ.get("SURGE_DATA", data)
    if not os.path.exists(os.path.join(data, "dr.json")):
        print(f"SKIPPED: the SURGE data is not at {data} (set SURGE_DATA)")
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("SKIPPED: regeneration tests run as root")
        sys.exit(SKIP)
    out = tempfile.mkdtemp(prefix="sbregen-")
    d = start_daemon(bin_dir, out)
    try:
        {"slice": slice_case, "full": full_case, "bins": bins_case}[case](bin_dir, data, out)
    finally:
        d.terminate()
        d.wait(timeout=300)
    if failures:
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
