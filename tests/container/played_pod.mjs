// SPDX-License-Identifier: MIT
// played_pod.mjs MODULES POD NAME TEXTFILE_DIR INTERVAL: prints, as YAML, the Pod of POD
// (packaging/podman/punctual-probe-pod.yaml, the DaemonSet's pod a user plays) as the test
// plays it: its metadata and spec as they are (the container, its command, environment,
// resources, security context and the hostPath), but the pod's NAME, the hostPath at
// TEXTFILE_DIR, a probe every INTERVAL seconds from the start (PUNCTUAL_SPLAY 0) and
// restartPolicy Never, so that a loop that ends shows.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const [modules, file, name, dir, interval] = process.argv.slice(2);
if (!interval) {
	console.error("usage: played_pod.mjs MODULES POD NAME TEXTFILE_DIR INTERVAL");
	process.exit(2);
}
const YAML = createRequire(join(resolve(modules), "noop.js"))("yaml");
const shipped = YAML.parseAllDocuments(readFileSync(file, "utf8"))
	.map((d) => d.toJS())
	.find((d) => d?.kind === "Pod");
if (!shipped) {
	console.error(`played_pod.mjs: no Pod in ${file}`);
	process.exit(1);
}
const spec = structuredClone(shipped.spec);
spec.restartPolicy = "Never";
for (const v of spec.volumes ?? [])
	if (v.hostPath)
		v.hostPath.path = dir;
for (const c of spec.containers) {
	const env = (c.env ?? []).filter((e) => !["PUNCTUAL_INTERVAL", "PUNCTUAL_SPLAY"].includes(e.name));
	c.env = [...env, { name: "PUNCTUAL_INTERVAL", value: interval }, { name: "PUNCTUAL_SPLAY", value: "0" }];
}
const pod = {
	apiVersion: "v1",
	kind: "Pod",
	metadata: { ...shipped.metadata, name },
	spec,
};
process.stdout.write(YAML.stringify(pod));
