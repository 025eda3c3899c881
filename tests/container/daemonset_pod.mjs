// SPDX-License-Identifier: MIT
// daemonset_pod.mjs MODULES DAEMONSET NAME TEXTFILE_DIR INTERVAL: prints, as YAML, the
// pod that packaging/kubernetes's DaemonSet would start on a node, for `podman kube play`
// (which plays pods, not DaemonSets): the template's spec as it is (the container, its
// command, environment, resources, security context and the hostPath), but the pod's
// NAME, the hostPath at TEXTFILE_DIR, a probe every INTERVAL seconds from the start
// (PUNCTUAL_SPLAY 0) and restartPolicy Never, so that a loop that ends shows.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const [modules, file, name, dir, interval] = process.argv.slice(2);
if (!interval) {
	console.error("usage: daemonset_pod.mjs MODULES DAEMONSET NAME TEXTFILE_DIR INTERVAL");
	process.exit(2);
}
const YAML = createRequire(join(resolve(modules), "noop.js"))("yaml");
const ds = YAML.parseAllDocuments(readFileSync(file, "utf8"))
	.map((d) => d.toJS())
	.find((d) => d?.kind === "DaemonSet");
if (!ds) {
	console.error(`daemonset_pod.mjs: no DaemonSet in ${file}`);
	process.exit(1);
}
const spec = structuredClone(ds.spec.template.spec);
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
	metadata: { name, labels: ds.spec.template.metadata?.labels ?? {} },
	spec,
};
process.stdout.write(YAML.stringify(pod));
