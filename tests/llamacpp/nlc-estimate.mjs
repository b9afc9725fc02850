// node-llama-cpp's own memory estimate, for check-runtime to set beside edgeplan's (node-llama-cpp 3.21.1,
// GgufInsights: estimateModelResourceRequirementsV2 + estimateContextResourceRequirementsV2, what
// `npx node-llama-cpp inspect estimate` adds up as "RAM usage", all on the CPU).
//   node nlc-estimate.mjs MODEL.gguf CASE...     CASE = CONTEXT:UBATCH:SEQUENCES:on|off:MMAP:TYPE_K:TYPE_V
// Prints one line per case: the bytes of weights + context it estimates. Run with NODE_PATH holding
// node-llama-cpp (check-runtime passes the install's node_modules).
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH ?? ".", "x.js"));
const { getLlama, readGgufFileInfo, GgufInsights, GgmlType } = await import(require.resolve("node-llama-cpp"));

const [file, ...cases] = process.argv.slice(2);
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const insights = await GgufInsights.from(await readGgufFileInfo(file), llama);
for (const c of cases) {
  const [context, ubatch, sequences, fa, mmap, k, v] = c.split(":");
  const model = await insights.estimateModelResourceRequirementsV2({ gpuLayers: 0, useMmap: mmap === "1" });
  const ctx = await insights.estimateContextResourceRequirementsV2({
    contextSize: Number(context), modelGpuLayers: 0, batchSize: Number(ubatch), sequences: Number(sequences),
    flashAttention: fa === "on", kvCacheKeyType: GgmlType[k.toUpperCase()], kvCacheValueType: GgmlType[v.toUpperCase()],
  });
  console.log(Math.round(model.cpuRam + ctx.cpuRam));
}
await llama.dispose();
