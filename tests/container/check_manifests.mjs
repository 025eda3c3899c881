// SPDX-License-Identifier: MIT
// check_manifests.mjs MODULES VERSION FILE...: packaging/kubernetes checked without a
// cluster. MODULES is a node_modules directory holding tests/container/k8s's packages.
// Each YAML document of each FILE is checked three ways, one line each, PASS or FAIL:
//   schema  kubernetes-models validates it against its kind's OpenAPI schema (required
//           fields, types, enums, formats such as quantities);
//   fields  TypeScript type-checks it as a literal of its kind's interface, which refuses
//           a field the API does not have (kubectl's strict validation does too, and a
//           misspelt securityContext field would otherwise be dropped in silence);
//   policy  what docs/KUBERNETES.md promises of this DaemonSet and its neighbours, and
//           that the Pod for podman (packaging/podman) is the DaemonSet's pod: the
//           template's spec and labels, equal.
// Exits 1 if any check failed.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";

const [modules, version, ...files] = process.argv.slice(2);
if (!modules || !version || files.length === 0) {
	console.error("usage: check_manifests.mjs MODULES VERSION FILE...");
	process.exit(2);
}
const require = createRequire(join(resolve(modules), "noop.js"));
const YAML = require("yaml");
const ts = require("typescript");

let fails = 0;
const pass = (what) => console.log(`PASS: ${what}`);
const fail = (what) => {
	console.log(`FAIL: ${what}`);
	fails++;
};

// The kubernetes-models module of a kind: "apps/v1" DaemonSet -> apps/v1/DaemonSet,
// the core group's "v1" Namespace -> v1/Namespace.
const modelPath = (doc) => `kubernetes-models/${doc.apiVersion}/${doc.kind}`;
const docName = (file, doc) =>
	`${basename(file)}: ${doc.kind} ${doc.metadata?.namespace ? doc.metadata.namespace + "/" : ""}${doc.metadata?.name}`;

const docs = [];
for (const file of files) {
	for (const d of YAML.parseAllDocuments(readFileSync(file, "utf8"))) {
		if (d.errors.length) {
			fail(`${basename(file)}: YAML: ${d.errors[0].message}`);
			continue;
		}
		const doc = d.toJS();
		if (doc === null)
			continue;
		if (!doc.apiVersion || !doc.kind) {
			fail(`${basename(file)}: a document without apiVersion and kind`);
			continue;
		}
		docs.push({ file, doc });
	}
}

function checkSchema({ file, doc }) {
	let Model;
	try {
		Model = Object.values(require(modelPath(doc)))[0];
	} catch {
		return fail(`${docName(file, doc)}: schema: no ${doc.apiVersion} ${doc.kind} in the API`);
	}
	try {
		new Model(doc).validate();
		pass(`${docName(file, doc)}: schema (${doc.apiVersion} ${doc.kind})`);
	} catch (e) {
		fail(`${docName(file, doc)}: schema: ${e.message}`);
	}
}

// Every document as `const docN: I<Kind> = {...}` in one TypeScript file beside MODULES,
// so that its imports resolve there; a diagnostic is mapped back to its document.
function checkFields() {
	const dir = mkdtempSync(join(modules, "..", "fields-"));
	const lines = [];
	const owner = []; // the document of each line
	docs.forEach(({ doc }, i) => {
		lines.push(`import type { I${doc.kind} as T${i} } from "${modelPath(doc)}";`);
		owner.push(i);
	});
	docs.forEach(({ doc }, i) => {
		for (const l of `export const doc${i}: T${i} = ${JSON.stringify(doc, null, 2)};`.split("\n")) {
			lines.push(l);
			owner.push(i);
		}
	});
	const src = join(dir, "manifests.ts");
	writeFileSync(src, lines.join("\n") + "\n");
	const program = ts.createProgram([src], {
		strict: true, noEmit: true, skipLibCheck: true, module: ts.ModuleKind.CommonJS,
		moduleResolution: ts.ModuleResolutionKind.Node10, target: ts.ScriptTarget.ES2020,
	});
	const bad = new Map();
	for (const d of ts.getPreEmitDiagnostics(program)) {
		const msg = ts.flattenDiagnosticMessageText(d.messageText, " ");
		if (!d.file || d.file.fileName !== src) {
			fail(`fields: TypeScript: ${msg}`);
			continue;
		}
		const { line } = d.file.getLineAndCharacterOfPosition(d.start);
		const i = owner[line];
		if (!bad.has(i))
			bad.set(i, `${msg} (at ${lines[line].trim()})`);
	}
	docs.forEach(({ file, doc }, i) => {
		if (bad.has(i))
			fail(`${docName(file, doc)}: fields: ${bad.get(i)}`);
		else
			pass(`${docName(file, doc)}: fields (no field the API lacks)`);
	});
	rmSync(dir, { recursive: true, force: true });
}

// What the DaemonSet promises (docs/KUBERNETES.md): check NAME, a condition, a reason.
function checkPolicy() {
	const of = (kind) => docs.filter(({ doc }) => doc.kind === kind).map(({ doc }) => doc);
	const [ns] = of("Namespace"), [sa] = of("ServiceAccount"), [ds] = of("DaemonSet");
	const check = (what, ok, why) => (ok ? pass(`policy: ${what}`) : fail(`policy: ${what}: ${why}`));
	if (!ds || !ns || !sa)
		return fail("policy: a Namespace, a ServiceAccount and a DaemonSet are needed");
	const spec = ds.spec.template.spec;
	const c = spec.containers[0];
	const sc = c.securityContext ?? {};
	const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
	const vol = (spec.volumes ?? []).find((v) => v.hostPath);
	const mount = vol && (c.volumeMounts ?? []).find((m) => m.name === vol.name);
	check("everything in one namespace",
		docs.every(({ doc }) => doc.kind === "Namespace" || doc.metadata.namespace === ns.metadata.name),
		`not all in ${ns.metadata.name}`);
	check("the pods run as the service account, which has no token",
		spec.serviceAccountName === sa.metadata.name && sa.automountServiceAccountToken === false &&
		spec.automountServiceAccountToken === false, "serviceAccountName or automountServiceAccountToken");
	check("one container, from punctual's image of this version",
		spec.containers.length === 1 && c.image.endsWith(`punctual:${version}`) &&
		ds.metadata.labels?.["app.kubernetes.io/version"] === version,
		`image ${c.image}, label ${ds.metadata.labels?.["app.kubernetes.io/version"]}, version ${version}`);
	check("the image's textfile loop, writing into the hostPath's mount",
		c.command?.[0] === "/usr/libexec/punctual/textfile-loop" && !!mount &&
		env.PUNCTUAL_TEXTFILE_DIR === mount.mountPath && !mount.readOnly,
		`command ${c.command}, PUNCTUAL_TEXTFILE_DIR ${env.PUNCTUAL_TEXTFILE_DIR}, mount ${mount?.mountPath}`);
	check("the hostPath is node_exporter's textfile directory, the only one",
		vol?.hostPath.path === "/var/lib/prometheus/node-exporter" &&
		spec.volumes.filter((v) => v.hostPath).length === 1, `${vol?.hostPath.path}`);
	check("no capability, no privilege, no escalation, a read-only root",
		sc.capabilities?.drop?.includes("ALL") && !sc.capabilities?.add?.length && sc.privileged === false &&
		sc.allowPrivilegeEscalation === false && sc.readOnlyRootFilesystem === true,
		JSON.stringify(sc));
	check("the node's namespaces stay the node's",
		!spec.hostPID && !spec.hostNetwork && !spec.hostIPC, "hostPID, hostNetwork or hostIPC");
	check("requests of CPU and memory, a memory limit, no CPU limit",
		c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory &&
		!c.resources?.limits?.cpu, JSON.stringify(c.resources));
	const [pod] = of("Pod");
	check("the Pod for podman kube play is the DaemonSet's pod (its template's spec and labels)",
		!!pod && isDeepStrictEqual(pod.spec, ds.spec.template.spec) &&
		isDeepStrictEqual(pod.metadata.labels, ds.spec.template.metadata.labels),
		pod ? "they differ: copy the template's spec and labels into the Pod" : "no Pod given");
	check("a schedule: an interval and a splay in whole seconds",
		/^[1-9][0-9]*$/.test(env.PUNCTUAL_INTERVAL ?? "") && /^[0-9]+$/.test(env.PUNCTUAL_SPLAY ?? ""),
		`PUNCTUAL_INTERVAL ${env.PUNCTUAL_INTERVAL}, PUNCTUAL_SPLAY ${env.PUNCTUAL_SPLAY}`);
}

docs.forEach(checkSchema);
if (docs.length)
	checkFields();
checkPolicy();
console.log(`check_manifests: ${docs.length} documents, ${fails ? fails + " failed" : "all passed"}`);
process.exit(fails ? 1 : 0);
