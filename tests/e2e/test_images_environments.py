"""/v1/environments: seed 000's aliases and the image sources; an alias as `image`."""


def test_environments_list_the_seed_aliases(org):
    status, body = org.api("GET", "/v1/environments")
    assert status == 200, body
    envs = {e["alias"]: e for e in body["environments"]}
    assert list(envs) == ["python", "node", "gcc", "rust", "blender"]
    assert envs["python"]["available"] is True and envs["python"]["reason"] is None
    for alias in ("node", "gcc", "rust", "blender"):
        if not envs[alias]["available"]:
            assert alias in envs[alias]["reason"], envs[alias]
    assert body["imageSources"] and isinstance(body["developerPublicImages"], bool)


def test_python_alias_runs_python(org):
    end = org.run(["python3", "-c", "print(6*7)"], image="python")
    assert end["status"] == "completed", end
    assert end["startup"]["stdout"] == "42\n"
    assert end["image"] == "debian:12"


def test_unavailable_alias_is_a_clear_422(org):
    status, body = org.api("GET", "/v1/environments")
    missing = [e for e in body["environments"] if not e["available"]]
    if not missing:
        return
    status, resp = org.api("POST", "/v1/sandboxes", {"image": missing[0]["alias"]})
    assert status == 422, resp
    assert resp["error"]["code"] == "unsupported"
    assert missing[0]["alias"] in resp["error"]["message"]
