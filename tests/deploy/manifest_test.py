#!/usr/bin/env python3
"""Checks the deployment files in deploy/ against what Kubernetes, Agones, Prometheus,
Grafana and systemd require, and against each other and the server: the fields each
kind must have, UDP container port 7777, Agones health settings, images, resources,
config keys loam-server knows, metric names server/metrics.cpp exports.

Usage: manifest_test.py [REPO_ROOT]   (ctest: deploy_manifest_test, label unit)
Needs PyYAML (Debian python3-yaml) and Python 3.11 (tomllib).
"""
import json
import pathlib
import re
import sys
import tomllib
import unittest

import yaml

ROOT = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"

GAME_PORT = 7777
LOAM_UID = 10001
# Ports an Agones pod's SDK sidecar listens on (gRPC, REST, /gshealthz): the game
# container shares the pod's network namespace, so its ops port must differ.
AGONES_SIDECAR_PORTS = {9357, 9358, 8080}
AGONES_PORT_POLICIES = {"Dynamic", "Static", "Passthrough", "None"}
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_PLAYER_NAME_BYTES = 31  # sim/core/short_text.h kMaxNameBytes
AGONES_HEALTH_PING_SECONDS = 2  # server/agones.h kAgonesHealthPeriod


def load_docs():
    """Every YAML document under deploy/k8s, as (file name, document)."""
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                docs.append((path.name, doc))
    return docs


def by_kind(docs, kind):
    return [(f, d) for f, d in docs if d.get("kind") == kind]


def metric_names():
    """Metric (sample) names loam-server exports, read from server/metrics.cpp."""
    text = (ROOT / "server" / "metrics.cpp").read_text()
    return set(re.findall(r'"(loam_[a-z0-9_]+)"', text))


def server_config_keys():
    """Config file keys loam-server accepts: the (possibly commented-out) keys of
    server/loam-server.example.toml, which lists them all."""
    keys = set()
    for line in (ROOT / "server" / "loam-server.example.toml").read_text().splitlines():
        m = re.match(r"^#?\s*([a-z_]+)\s*=", line)
        if m:
            keys.add(m.group(1))
    return keys


QUANTITY = re.compile(r"^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")
FACTORS = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(q):
    """A Kubernetes resource quantity ("500m", "2", "1Gi") as a number."""
    m = QUANTITY.match(str(q))
    if not m:
        raise ValueError(f"not a resource quantity: {q!r}")
    return float(m.group(1)) * FACTORS[m.group(2)]


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.docs = load_docs()
        cls.metrics = metric_names()
        cls.config_keys = server_config_keys()

    def the(self, kind):
        found = by_kind(self.docs, kind)
        self.assertEqual(len(found), 1, f"want exactly one {kind} in deploy/k8s, got {len(found)}")
        return found[0][1]

    def config_map(self):
        return self.the("ConfigMap")

    def server_config(self):
        data = self.config_map()["data"]
        self.assertIn("loam-server.toml", data)
        return tomllib.loads(data["loam-server.toml"])

    def check_metric_names(self, expr, where):
        names = set(re.findall(r"\b(loam_[a-z0-9_]+)", expr))
        self.assertTrue(names, f"{where}: no loam_ metric in {expr!r}")
        unknown = names - self.metrics
        self.assertFalse(unknown, f"{where}: metrics not exported by server/metrics.cpp: {sorted(unknown)}")


class CommonFields(Base):
    def test_every_document_has_api_version_kind_and_name(self):
        self.assertGreaterEqual(len(self.docs), 5)
        for f, d in self.docs:
            with self.subTest(file=f):
                self.assertIsInstance(d.get("apiVersion"), str)
                self.assertIsInstance(d.get("kind"), str)
                name = d.get("metadata", {}).get("name")
                self.assertIsInstance(name, str, f"{f}: metadata.name")
                self.assertRegex(name, NAME_RE)
                self.assertLessEqual(len(name), 63)

    def test_expected_kinds_and_api_versions(self):
        want = {"GameServer": "agones.dev/v1", "Fleet": "agones.dev/v1",
                "FleetAutoscaler": "autoscaling.agones.dev/v1", "ConfigMap": "v1", "Job": "batch/v1"}
        for kind, api in want.items():
            with self.subTest(kind=kind):
                self.assertEqual(self.the(kind)["apiVersion"], api)

    def test_one_image_everywhere(self):
        images = set()
        for f, d in self.docs:
            for c in pod_containers(d):
                images.add(c.get("image"))
        self.assertEqual(len(images), 1, f"deploy/k8s uses several images: {images}")
        image = images.pop()
        self.assertRegex(image, r"^[^:@\s]+(:[A-Za-z0-9_.-]+|@sha256:[0-9a-f]{64})$",
                         "the image needs an explicit tag or digest")
        self.assertFalse(image.endswith(":latest"))


def pod_spec(doc):
    """The Pod spec inside a GameServer, Fleet or Job (None for other kinds)."""
    kind = doc.get("kind")
    if kind == "GameServer":
        return doc["spec"]["template"]["spec"]
    if kind == "Fleet":
        return doc["spec"]["template"]["spec"]["template"]["spec"]
    if kind == "Job":
        return doc["spec"]["template"]["spec"]
    return None


def pod_containers(doc):
    spec = pod_spec(doc)
    return spec.get("containers", []) if spec else []


class GameServerSpecs(Base):
    """The GameServer and the Fleet's template share every check."""

    def specs(self):
        gs = self.the("GameServer")
        fleet = self.the("Fleet")
        return [("GameServer", gs["spec"]), ("Fleet template", fleet["spec"]["template"]["spec"])]

    def test_fleet_template_is_the_gameserver_spec(self):
        (_, gs), (_, fleet) = self.specs()
        self.assertEqual(gs, fleet, "fleet.yaml's template drifted from gameserver.yaml's spec")

    def game_container(self, spec):
        containers = spec["template"]["spec"]["containers"]
        name = spec.get("container")
        if len(containers) > 1:
            self.assertIsNotNone(name, "spec.container must name the game server container")
        if name is None:
            return containers[0]
        match = [c for c in containers if c["name"] == name]
        self.assertEqual(len(match), 1, f"spec.container {name!r} is not a container of the pod")
        return match[0]

    def test_udp_game_port_7777(self):
        for where, spec in self.specs():
            with self.subTest(where=where):
                ports = spec.get("ports")
                self.assertTrue(ports, "spec.ports")
                game = [p for p in ports if p.get("containerPort") == GAME_PORT]
                self.assertEqual(len(game), 1, "one port with containerPort 7777")
                p = game[0]
                self.assertEqual(p.get("protocol", "UDP"), "UDP")
                self.assertIn(p.get("portPolicy", "Dynamic"), AGONES_PORT_POLICIES)
                if p.get("portPolicy") == "Static":
                    self.assertIsInstance(p.get("hostPort"), int)
                if "container" in p:
                    self.assertEqual(p["container"], self.game_container(spec)["name"])
                self.assertEqual(self.server_config().get("port", 7777), GAME_PORT)

    def test_health_settings(self):
        for where, spec in self.specs():
            with self.subTest(where=where):
                h = spec.get("health")
                self.assertIsInstance(h, dict, "spec.health")
                self.assertIs(h.get("disabled", False), False)
                for key in ("initialDelaySeconds", "periodSeconds", "failureThreshold"):
                    self.assertIsInstance(h.get(key), int, f"health.{key}")
                    self.assertGreater(h[key], 0, f"health.{key}")
                # The server pings every 2 s: a period must hold at least two pings.
                self.assertGreaterEqual(h["periodSeconds"], 2 * AGONES_HEALTH_PING_SECONDS)

    def test_image_resources_and_security(self):
        for where, spec in self.specs():
            with self.subTest(where=where):
                pod = spec["template"]["spec"]
                c = self.game_container(spec)
                self.assertTrue(c.get("image"))
                res = c.get("resources", {})
                for part in ("requests", "limits"):
                    for r in ("cpu", "memory"):
                        self.assertIn(r, res.get(part, {}), f"resources.{part}.{r}")
                for r in ("cpu", "memory"):
                    self.assertLessEqual(quantity(res["requests"][r]), quantity(res["limits"][r]), r)
                # Agones injects its own liveness probe (sidecar /gshealthz) only when
                # the container has none.
                self.assertNotIn("livenessProbe", c)
                self.assertGreaterEqual(pod.get("terminationGracePeriodSeconds", 30), 30,
                                        "time for the final save after SIGTERM")
                sc = pod.get("securityContext", {})
                self.assertTrue(sc.get("runAsNonRoot"))
                self.assertEqual(sc.get("runAsUser"), LOAM_UID, "the image's loam user")

    def test_ops_port_matches_config_and_avoids_the_sidecar(self):
        cfg = self.server_config()
        for where, spec in self.specs():
            with self.subTest(where=where):
                c = self.game_container(spec)
                tcp = [p["containerPort"] for p in c.get("ports", []) if p.get("protocol", "TCP") == "TCP"]
                self.assertEqual(tcp, [cfg["http_port"]], "the ops port declared is the config's http_port")
                sdk = spec.get("sdkServer", {})
                taken = AGONES_SIDECAR_PORTS | {sdk.get("grpcPort", 9357), sdk.get("httpPort", 9358)}
                self.assertNotIn(cfg["http_port"], taken)
                self.assertEqual(cfg.get("http_bind"), "0.0.0.0", "Prometheus scrapes from outside the pod")
                ann = spec["template"].get("metadata", {}).get("annotations", {})
                if "prometheus.io/port" in ann:
                    self.assertEqual(int(ann["prometheus.io/port"]), cfg["http_port"])
                probe = c.get("readinessProbe", {}).get("httpGet")
                if probe:
                    self.assertEqual(probe["path"], "/readyz")

    def test_config_and_saves_are_mounted(self):
        cfg = self.server_config()
        cm = self.config_map()
        for where, spec in self.specs():
            with self.subTest(where=where):
                pod = spec["template"]["spec"]
                c = self.game_container(spec)
                args = c.get("args", [])
                self.assertIn("--config", args)
                config_path = pathlib.PurePosixPath(args[args.index("--config") + 1])
                volumes = {v["name"]: v for v in pod.get("volumes", [])}
                mounts = {pathlib.PurePosixPath(m["mountPath"]): m["name"] for m in c.get("volumeMounts", [])}
                self.assertIn(config_path.parent, mounts, "the --config folder is a volume mount")
                vol = volumes[mounts[config_path.parent]]
                self.assertEqual(vol["configMap"]["name"], cm["metadata"]["name"])
                self.assertIn(config_path.name, cm["data"])
                self.assertIn(pathlib.PurePosixPath(cfg["save_dir"]), mounts, "save_dir is a volume mount")


class Autoscaler(Base):
    def test_buffer_policy_targets_the_fleet(self):
        fas = self.the("FleetAutoscaler")["spec"]
        self.assertEqual(fas["fleetName"], self.the("Fleet")["metadata"]["name"])
        policy = fas["policy"]
        self.assertEqual(policy["type"], "Buffer")
        b = policy["buffer"]
        self.assertIsInstance(b.get("maxReplicas"), int, "buffer.maxReplicas is required")
        size = b["bufferSize"]
        if isinstance(size, str):
            self.assertRegex(size, r"^[0-9]+%$")
        else:
            self.assertIsInstance(size, int)
            self.assertGreater(size, 0)
            self.assertLessEqual(size, b["maxReplicas"])
            self.assertGreaterEqual(b.get("minReplicas", size), size, "minReplicas below bufferSize")
        self.assertLessEqual(b.get("minReplicas", 0), b["maxReplicas"])
        if "sync" in fas:
            self.assertEqual(fas["sync"]["type"], "FixedInterval")
            self.assertGreater(fas["sync"]["fixedInterval"]["seconds"], 0)

    def test_fleet_fields(self):
        fleet = self.the("Fleet")["spec"]
        self.assertIsInstance(fleet.get("replicas"), int)
        self.assertGreaterEqual(fleet["replicas"], 0)
        self.assertIn(fleet.get("scheduling", "Packed"), {"Packed", "Distributed"})
        self.assertIn(fleet.get("strategy", {}).get("type", "RollingUpdate"), {"RollingUpdate", "Recreate"})


class ServerConfig(Base):
    def test_config_map_keys_are_server_options(self):
        cfg = self.server_config()
        unknown = set(cfg) - self.config_keys
        self.assertFalse(unknown, f"keys loam-server does not know: {sorted(unknown)}")
        self.assertTrue((ROOT / cfg["scene"]).is_file(), f"scene {cfg['scene']} is not in the repository")
        self.assertIn(cfg.get("log_format", "text"), {"text", "json"})

    def test_image_config_keys_are_server_options(self):
        cfg = tomllib.loads((DEPLOY / "loam-server.container.toml").read_text())
        self.assertFalse(set(cfg) - self.config_keys)
        self.assertTrue((ROOT / cfg["scene"]).is_file())
        self.assertEqual(cfg["port"], GAME_PORT)
        self.assertNotIn(cfg["http_port"], AGONES_SIDECAR_PORTS)
        self.assertEqual(cfg["http_port"], self.server_config()["http_port"], "image and ConfigMap ops ports differ")


class BotsJob(Base):
    def test_job(self):
        job = self.the("Job")
        spec = job["spec"]
        self.assertGreaterEqual(spec.get("parallelism", 1), 1)
        self.assertGreaterEqual(spec.get("completions", 1), spec.get("parallelism", 1))
        pod = spec["template"]["spec"]
        self.assertIn(pod.get("restartPolicy"), {"Never", "OnFailure"}, "a Job's pods may not restart Always")
        (c,) = pod["containers"]
        self.assertTrue(c.get("image"))
        for part in ("requests", "limits"):
            for r in ("cpu", "memory"):
                self.assertIn(r, c.get("resources", {}).get(part, {}))
        script = " ".join(c.get("command", []) + c.get("args", []))
        self.assertIn("loam-bots", script)
        for flag in ("--server", "--count", "--mode", "--duration", "--report", "--name-prefix"):
            self.assertIn(flag, script)
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        self.assertRegex(env["LOAM_TARGET"], r"^[^:\s]+:[0-9]{1,5}$", "LOAM_TARGET is HOST:PORT")
        # Bot names are <prefix><N>; the server rejects names over 31 bytes.
        longest = f"p{spec.get('completions', 1) - 1}-{env['LOAM_BOTS_PER_POD']}"
        self.assertIn('--name-prefix "p${JOB_COMPLETION_INDEX}-"', script)
        self.assertEqual(spec.get("completionMode"), "Indexed", "JOB_COMPLETION_INDEX needs Indexed")
        self.assertLessEqual(len(longest), MAX_PLAYER_NAME_BYTES)
        report_dir = "/reports"
        self.assertIn(report_dir, [m["mountPath"] for m in c.get("volumeMounts", [])])


class Prometheus(Base):
    def test_alert_rules(self):
        doc = yaml.safe_load((DEPLOY / "prometheus" / "loam-alerts.yaml").read_text())
        rules = [r for g in doc["groups"] for r in g["rules"]]
        names = [r["alert"] for r in rules]
        self.assertEqual(len(names), len(set(names)), "duplicate alert names")
        for r in rules:
            with self.subTest(alert=r.get("alert")):
                self.assertRegex(r["alert"], r"^[A-Za-z][A-Za-z0-9_]*$")
                self.assertIn(r["labels"]["severity"], {"critical", "warning", "info"})
                self.assertIn("summary", r["annotations"])
                if "for" in r:
                    self.assertRegex(r["for"], r"^[0-9]+[smhd]$")
                if "loam_" in r["expr"]:
                    self.check_metric_names(r["expr"], r["alert"])
        exprs = " ".join(r["expr"] for r in rules)
        # The alerts the operations guide promises.
        for needle in ("up{", "loam_ready", "loam_step_seconds_bucket", "loam_tick_overruns_total",
                       "loam_malformed_packets_total", "loam_save_failures_total", "loam_resident_memory_bytes"):
            self.assertIn(needle, exprs)


class Grafana(Base):
    def test_dashboard(self):
        dash = json.loads((DEPLOY / "grafana" / "loam-dashboard.json").read_text())
        self.assertTrue(dash["title"])
        panels = dash["panels"]
        ids = [p["id"] for p in panels]
        self.assertEqual(len(ids), len(set(ids)), "panel ids must be unique")
        exprs = []
        for p in panels:
            with self.subTest(panel=p["title"]):
                g = p["gridPos"]
                self.assertLessEqual(g["x"] + g["w"], 24)
                self.assertTrue(p["targets"])
                for t in p["targets"]:
                    self.check_metric_names(t["expr"], p["title"])
                    exprs.append(t["expr"])
        joined = " ".join(exprs)
        for needle in ("loam_players", "histogram_quantile(0.5", "histogram_quantile(0.99",
                       "loam_received_bytes_total", "loam_sent_bytes_total", "loam_sent_message_bytes_total"):
            self.assertIn(needle, joined)


class Container(Base):
    def test_dockerfile(self):
        text = (DEPLOY / "Dockerfile").read_text()
        lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
        first_from = next(i for i, l in enumerate(lines) if l.startswith("FROM "))
        self.assertIn("ARG BASE_IMAGE=debian:bookworm-slim", lines[:first_from])
        self.assertGreaterEqual(sum(l.startswith("FROM ") for l in lines), 2, "multi-stage")
        cfg = tomllib.loads((DEPLOY / "loam-server.container.toml").read_text())
        expose = " ".join(l for l in lines if l.startswith("EXPOSE "))
        self.assertIn(f"{GAME_PORT}/udp", expose)
        self.assertIn(f"{cfg['http_port']}/tcp", expose)
        user = [l.split()[1] for l in lines if l.startswith("USER ")]
        self.assertTrue(user and user[-1] not in ("root", "0", "0:0"), "the image runs as a non-root user")
        self.assertIn(f"VOLUME {cfg['save_dir']}", lines)
        self.assertIn("STOPSIGNAL SIGTERM", lines)
        self.assertTrue(any(l.startswith("HEALTHCHECK ") for l in lines))
        self.assertIn(f"ARG LOAM_UID={LOAM_UID}", lines)
        for src in ("scenes/", "sim/data/"):
            self.assertTrue(any(l.startswith("COPY " + src) for l in lines), src)
        self.assertIn(f"LOAM_HTTP_PORT:-{cfg['http_port']}", (DEPLOY / "healthcheck.sh").read_text(),
                      "the health check's default port is the image's http_port")


class Systemd(Base):
    def test_unit(self):
        sections = {}
        current = None
        for line in (DEPLOY / "systemd" / "loam-server.service").read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                current = sections.setdefault(line.strip("[]"), {})
                continue
            key, _, value = line.partition("=")
            current.setdefault(key, []).append(value)
        svc = sections["Service"]
        one = lambda k: svc[k][-1]
        self.assertIn("loam-server", one("ExecStart"))
        self.assertEqual(one("KillSignal"), "SIGTERM")
        self.assertEqual(one("Restart"), "on-failure")
        self.assertGreaterEqual(int(one("TimeoutStopSec")), 30)
        self.assertTrue(one("DynamicUser") == "yes" or "User" in svc, "runs as its own user")
        state = one("StateDirectory").split()[0]
        self.assertIn(f"--save-dir /var/lib/{state}/", one("ExecStart"))
        self.assertEqual(one("RestartPreventExitStatus"), "2", "a bad config (exit 2) is not restarted")
        self.assertEqual(one("NoNewPrivileges"), "yes")
        self.assertIn("WantedBy", sections["Install"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
