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
         ("v1", "PersistentVolumeClaim"): "V1PersistentVolumeClaim", ("v1", "ConfigMap"): "V1ConfigMap"}
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
    if kinds != ["DaemonSet", "Job", "Job"]:
        failures.append(f"expected a DaemonSet and two Jobs, got {kinds}")
    for where, doc in docs:
        errs = check_doc(doc, where)
        failures += errs
        print(f"{where}: {doc['kind']} {doc['metadata']['name']}: {'ok' if not errs else errs}")
    by_name = {d["metadata"]["name"]: d for _, d in docs}
    regen = by_name.get("surgebox-regen", {}).get("spec", {})
    if regen.get("completionMode") != "Indexed":
        failures.append("surgebox-regen: completionMode Indexed")
    env = {e["name"]: e.get("value") for c in regen.get("template", {}).get("spec", {}).get("containers", [])
           for e in c.get("env", [])}
    if env.get("SURGEBOX_SHARDS") != str(regen.get("completions")):
        failures.append(f"surgebox-regen: SURGEBOX_SHARDS {env.get('SURGEBOX_SHARDS')} != completions "
                        f"{regen.get('completions')}")
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
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
