#!/usr/bin/python3
"""deploy/kubernetes/*.yaml checked offline against a pinned schema: the
model classes of Debian's python3-kubernetes (22.6, Kubernetes 1.22 API),
whose `attribute_map`/`openapi_types` list every field of every API object.
Every key of every manifest must be a field of its object, recursively,
with a value of the field's type; the required fields must be there (the
client's own deserializer). The checker itself must catch a misspelled or
misplaced field (checked on altered copies).

  test_k8s_manifests.py DEPLOY_DIR
"""
import copy
import glob
import os
import re
import sys

SKIP = 77
try:
    import yaml
    from kubernetes import client
except ImportError as e:
    print(f"SKIPPED: {e} (Debian's python3-kubernetes and python3-yaml, for /usr/bin/python3)")
    sys.exit(SKIP)

KINDS = {("batch/v1", "Job"): "V1Job", ("apps/v1", "DaemonSet"): "V1DaemonSet",
         ("v1", "PersistentVolumeClaim"): "V1PersistentVolumeClaim", ("v1", "ConfigMap"): "V1ConfigMap",
         ("apps/v1", "Deployment"): "V1Deployment", ("v1", "Service"): "V1Service",
         ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget"}
PRIMITIVE = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object}


def check(value, typ, path, errors):
    """value against the openapi type name typ ('V1PodSpec', 'list[V1Container]', 'dict(str, str)', 'int')"""
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not isinstance(value, list):
            errors.append(f"{path}: a list expected, got {type(value).__name__}")
            return
        for i, v in enumerate(value):
            check(v, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", typ)
    if m:
        if not isinstance(value, dict):
            errors.append(f"{path}: a map expected, got {type(value).__name__}")
            return
        for k, v in value.items():
            check(v, m.group(1), f"{path}.{k}", errors)
        return
    if typ in PRIMITIVE:
        ok = isinstance(value, PRIMITIVE[typ]) and not (typ == "int" and isinstance(value, bool))
        if not ok:
            errors.append(f"{path}: {typ} expected, got {value!r}")
        return
    cls = getattr(client, typ, None)
    if cls is None:
        errors.append(f"{path}: no model class {typ} in the schema")
        return
    if not isinstance(value, dict):
        errors.append(f"{path}: an object ({typ}) expected, got {value!r}")
        return
    by_json = {j: attr for attr, j in cls.attribute_map.items()}
    for k, v in value.items():
        if k not in by_json:
            errors.append(f"{path}.{k}: {typ} has no field {k!r}")
            continue
        check(v, cls.openapi_types[by_json[k]], f"{path}.{k}", errors)


def check_doc(doc, where):
    errors = []
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key not in KINDS:
        return [f"{where}: unknown apiVersion/kind {key}"]
    check(doc, KINDS[key], where, errors)
    if not errors:  # required fields: the client's deserializer raises ValueError without them
        try:
            client.ApiClient()._ApiClient__deserialize(copy.deepcopy(doc), KINDS[key])
        except (ValueError, TypeError) as e:
            errors.append(f"{where}: {e}")
    return errors


def fleet_checks(by_name):
    """fleet.yaml (issue 39): what the schema cannot say. The cpu request is
    --jobs; both probes GET /v1/health (tokenless: a probe cannot send a
    Secret) on the port --http listens on; the token file is a Secret's key
    mounted as a file (subPath: surgeboxd refuses a symlink) of mode 0400;
    only SYS_ADMIN is added, never privileged; the Service and the
    PodDisruptionBudget select exactly the Deployment's pods."""
    bad = []
    dep = by_name.get("surgebox-fleet-deployment")
    svc = by_name.get("surgebox-fleet-service")
    pdb = by_name.get("surgebox-fleet-pdb")
    if not (dep and svc and pdb):
        return ["fleet.yaml: a Deployment, a Service and a PodDisruptionBudget named surgebox-fleet"]
    pod = dep["spec"]["template"]
    labels = pod["metadata"]["labels"]
    if dep["spec"]["selector"]["matchLabels"] != labels:
        bad.append(f"Deployment selector {dep['spec']['selector']} is not its pods' labels {labels}")
    if svc["spec"].get("selector") != labels:
        bad.append(f"Service selector {svc['spec'].get('selector')} is not the pods' labels {labels}")
    if pdb["spec"].get("selector", {}).get("matchLabels") != labels:
        bad.append(f"PodDisruptionBudget selector {pdb['spec'].get('selector')} is not the pods' labels {labels}")
    if not (pdb["spec"].get("maxUnavailable") == 1 or pdb["spec"].get("minAvailable")):
        bad.append("PodDisruptionBudget: maxUnavailable 1 or a minAvailable")
    c = pod["spec"]["containers"][0]
    args = c.get("args", [])
    opt = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
    if c.get("resources", {}).get("requests", {}).get("cpu") != opt.get("--jobs"):
        bad.append(f"cpu request {c.get('resources')} != --jobs {opt.get('--jobs')}")
    port = int(opt.get("--http", ":0").rsplit(":", 1)[1])
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    if ports.get("http") != port:
        bad.append(f"container port http {ports} != --http {opt.get('--http')}")
    tgt = svc["spec"]["ports"][0].get("targetPort")
    if tgt not in ("http", port):
        bad.append(f"Service targetPort {tgt} is not the container's http port")
    for probe in ("readinessProbe", "livenessProbe"):
        g = c.get(probe, {}).get("httpGet", {})
        if g.get("path") != "/v1/health" or g.get("port") not in ("http", port) or g.get("httpHeaders"):
            bad.append(f"{probe}: GET /v1/health on the http port, no header: {c.get(probe)}")
    tok = opt.get("--http-token-file")
    mount = next((m for m in c.get("volumeMounts", []) if m["mountPath"] == tok), None)
    vol = next((v for v in pod["spec"].get("volumes", []) if mount and v["name"] == mount["name"]), {})
    if not (mount and mount.get("subPath") and vol.get("secret", {}).get("secretName")):
        bad.append(f"--http-token-file {tok}: a Secret's key mounted with subPath: {mount} {vol}")
    elif vol["secret"].get("defaultMode", 0o644) & 0o077:
        bad.append(f"the token's mode {vol['secret'].get('defaultMode'):o}: surgeboxd refuses one others may read")
    sc = c.get("securityContext", {})
    if sc.get("privileged") or sc.get("capabilities", {}).get("add") != ["SYS_ADMIN"]:
        bad.append(f"securityContext: SYS_ADMIN added, not privileged: {sc}")
    if "limits" in c.get("resources", {}) and "cpu" in c["resources"]["limits"]:
        bad.append("no cpu limit (throttling would turn into false timeouts)")
    return bad


def main():
    deploy = sys.argv[1]
    files = sorted(glob.glob(os.path.join(deploy, "kubernetes", "*.yaml")))
    failures = []
    docs = []
    for f in files:
        with open(f) as fh:
            for i, doc in enumerate(yaml.safe_load_all(fh)):
                if doc is not None:
                    docs.append((f"{os.path.basename(f)}#{i}", doc))
    kinds = sorted(d["kind"] for _, d in docs)
    if kinds != ["DaemonSet", "Deployment", "Job", "Job", "PodDisruptionBudget", "Service"]:
        failures.append(f"expected a DaemonSet, two Jobs and fleet.yaml's Deployment, Service and "
                        f"PodDisruptionBudget, got {kinds}")
    for where, doc in docs:
        errs = check_doc(doc, where)
        failures += errs
        print(f"{where}: {doc['kind']} {doc['metadata']['name']}: {'ok' if not errs else errs}")
    # fleet.yaml's three objects share their name: keyed by kind for those
    by_name = {d["metadata"]["name"] + ({"Deployment": "-deployment", "Service": "-service",
                                         "PodDisruptionBudget": "-pdb"}.get(d["kind"], "")): d for _, d in docs}
    regen = by_name.get("surgebox-regen", {}).get("spec", {})
    if regen.get("completionMode") != "Indexed":
        failures.append("surgebox-regen: completionMode Indexed")
    env = {e["name"]: e.get("value") for c in regen.get("template", {}).get("spec", {}).get("containers", [])
           for e in c.get("env", [])}
    if env.get("SURGEBOX_SHARDS") != str(regen.get("completions")):
        failures.append(f"surgebox-regen: SURGEBOX_SHARDS {env.get('SURGEBOX_SHARDS')} != completions "
                        f"{regen.get('completions')}")
    failures += fleet_checks(by_name)
    # the checker must see mistakes: a misspelled field, one in the wrong object, a wrong type
    job = copy.deepcopy(by_name["surgebox-regen"])
    job["spec"]["completionmode"] = job["spec"].pop("completionMode")
    if not any("completionmode" in e for e in check_doc(job, "altered")):
        failures.append("a misspelled spec.completionmode went unnoticed")
    job = copy.deepcopy(by_name["surgebox-regen"])
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["seccompProfil"] = {"type": "Unconfined"}
    if not any("seccompProfil" in e for e in check_doc(job, "altered")):
        failures.append("a misspelled securityContext.seccompProfil went unnoticed")
    ds = copy.deepcopy(by_name["surgeboxd"])
    ds["spec"]["template"]["spec"]["hostPath"] = {"path": "/x"}  # belongs to a volume, not the pod
    if not any("hostPath" in e for e in check_doc(ds, "altered")):
        failures.append("a misplaced hostPath went unnoticed")
    job = copy.deepcopy(by_name["surgebox-regen"])
    job["spec"]["completions"] = "8"
    if not any("completions" in e for e in check_doc(job, "altered")):
        failures.append("completions as a string went unnoticed")
    job = copy.deepcopy(by_name["surgebox-regen"])
    del job["spec"]["template"]["spec"]["containers"][0]["name"]
    if not check_doc(job, "altered"):
        failures.append("a container without its required name went unnoticed")
    # and fleet_checks must see its own: cpu request != --jobs, a probe needing the token
    if "surgebox-fleet-deployment" in by_name:
        alt = copy.deepcopy(by_name)
        alt["surgebox-fleet-deployment"]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
        if not any("--jobs" in e for e in fleet_checks(alt)):
            failures.append("a cpu request other than --jobs went unnoticed")
        alt = copy.deepcopy(by_name)
        alt["surgebox-fleet-deployment"]["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["path"] = "/v1/ping"
        if not any("livenessProbe" in e for e in fleet_checks(alt)):
            failures.append("a liveness probe on the token-protected /v1/ping went unnoticed")
    pdb = copy.deepcopy(by_name.get("surgebox-fleet-pdb", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                                             "metadata": {"name": "x"}, "spec": {}}))
    pdb["spec"]["maxunavailable"] = 1
    if not any("maxunavailable" in e for e in check_doc(pdb, "altered")):
        failures.append("a misspelled PodDisruptionBudget spec.maxunavailable went unnoticed")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
