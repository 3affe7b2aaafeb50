// Kubernetes: a serving Deployment + Service + autoscaler (HPA autoscaling/v2 or KEDA
// ScaledObject) sized from the plan, with the model cache volume and the Hugging Face token
// Secret; a training indexed Job + headless Service + ConfigMap of the launch's config files.
// Checked in CTest against the API schemas (tools/schema-check, kubernetes-models).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"
#include "gpuplan/model.h"

namespace gpuplan::emit {

namespace {

// B12: scale up fast (double within 15 s), scale down slowly (5 min window, 20 % per minute).
constexpr int kScaleDownWindowS = 300;
constexpr int kScaleDownPercent = 20;
constexpr int kScaleDownPeriodS = 60;
constexpr int kScaleUpPercent = 100;
constexpr int kScaleUpPeriodS = 15;
// A4/A5 inference host: 6 cores per GPU and 1.5 x the GPU memory in RAM.
constexpr int kServeCoresPerGpu = 6;
constexpr double kServeRamPerGpuMemory = 1.5;
constexpr const char* kHfSecret = "hf-token";
constexpr const char* kHpaMetric = "gpuplan_requests_per_second";

bool HyperscalerCloud(const std::string& cloud) {
  return cloud == "aws" || cloud == "gcp" || cloud == "azure" || cloud == "oci";
}

// The `nvidia.com/gpu.product` label NVIDIA GPU Feature Discovery puts on a node: the NVML
// product name (nvidia-smi's, one of the catalog's aliases: "NVIDIA L40S", "Tesla T4") with
// spaces as dashes ("NVIDIA-L40S", "Tesla-T4"). Empty when the catalog has no such name.
std::string GfdProduct(const Plan& p, const Catalog& catalog) {
  const Accelerator* a = catalog.FindAccelerator(p.accelerator);
  if (!a || a->vendor != "NVIDIA") return "";
  for (const auto& al : a->aliases) {
    if (al.rfind("NVIDIA ", 0) == 0 || al.rfind("Tesla ", 0) == 0) {
      std::string label = al;
      std::replace(label.begin(), label.end(), ' ', '-');
      return label;
    }
  }
  return "";
}

ojson NodeSelector(const Plan& p, const Catalog& catalog) {
  if (HyperscalerCloud(p.cloud)) return {{"node.kubernetes.io/instance-type", p.instance_type}};
  if (const std::string gfd = GfdProduct(p, catalog); !gfd.empty())
    return {{"nvidia.com/gpu.product", gfd}};
  if (!p.accelerator.empty()) return {{"nvidia.com/gpu.product", p.accelerator}};
  return ojson::object();
}

ojson GpuTolerations() {
  return ojson::array(
      {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
}

ojson HfTokenEnv(bool required) {
  return {{"name", "HF_TOKEN"},
          {"valueFrom",
           {{"secretKeyRef", {{"name", kHfSecret}, {"key", "token"}, {"optional", !required}}}}}};
}

// Bytes of the weights at the plan's precision (for the cache volume size); 0 if unknown.
double WeightBytes(const Plan& p) {
  auto m = ResolveModel(p.model_ref, "job.model");
  if (!m) return 0;
  double bytes_per_param = 2;
  if (p.serve_quant == "awq" || p.serve_quant == "gptq" || p.serve_quant == "bnb-nf4")
    bytes_per_param = 0.5;
  if (p.serve_precision == "fp8" || p.serve_precision == "int8") bytes_per_param = 1;
  if (p.serve_precision == "fp32") bytes_per_param = 4;
  return bytes_per_param * static_cast<double>(CountParams(*m).total);
}

std::string Doc(const ojson& j) { return "---\n" + Yaml(j); }

}  // namespace

Scaling ScalingFor(const Plan& p, const EmitOptions& opt) {
  Scaling s;
  s.target_per_replica = p.capacity_qps;
  const double peak = opt.peak_qps.value_or(p.qps);
  const int peak_replicas = static_cast<int>(std::ceil(peak / p.capacity_qps - 1e-9));
  s.max_replicas = std::max({1, p.replicas, peak_replicas});
  s.max_reason =
      opt.peak_qps
          ? fmt::format("peak {:g} req/s / {:.3f} req/s per replica", peak, p.capacity_qps)
          : fmt::format("the plan's {} replica(s) for its {:g} req/s peak", p.replicas, p.qps);
  if (opt.min_replicas > 0) {
    s.min_replicas = opt.min_replicas;
    s.min_reason = "the user's floor (--min-replicas)";
  } else if (opt.off_peak_qps) {
    s.min_replicas =
        std::max(1, static_cast<int>(std::ceil(*opt.off_peak_qps / p.capacity_qps - 1e-9)));
    s.min_reason = fmt::format("off-peak {:g} req/s / {:.3f} req/s per replica", *opt.off_peak_qps,
                               p.capacity_qps);
  } else {
    s.min_replicas = 1;
    s.min_reason = "1: no off-peak load given (--off-peak-qps or --min-replicas set it)";
  }
  if (opt.min_replicas > s.max_replicas) {  // the user's floor wins over the plan's peak fleet
    s.max_reason =
        fmt::format("raised to the user's floor (--min-replicas); the plan needs {} ({})",
                    s.max_replicas, s.max_reason);
    s.max_replicas = opt.min_replicas;
  }
  s.min_replicas = std::min(s.min_replicas, s.max_replicas);
  return s;
}

namespace {

std::string ScalingComment(const Plan& p, const ServeRuntime& rt, const Scaling& sc, bool keda) {
  std::string s = fmt::format(
      "# Autoscaling from the plan: target {:.3f} req/s per replica = the plan's sustainable load "
      "per\n"
      "# replica at its {:.0f}% planned utilisation ({} counter `{}`).\n"
      "# minReplicas {} = {}; maxReplicas {} = {}.\n"
      "# behavior (guide B12): scale up at once (no stabilisation window) by up to {}% every {} s, "
      "since\n"
      "# a queue builds within seconds and new replicas take minutes to load weights; scale down "
      "only\n"
      "# after {} s below target and by at most {}% every {} s, so a short dip does not drop warm "
      "replicas.\n",
      sc.target_per_replica, 100 * p.target_utilization, rt.engine, rt.request_counter,
      sc.min_replicas, sc.min_reason, sc.max_replicas, sc.max_reason, kScaleUpPercent,
      kScaleUpPeriodS, kScaleDownWindowS, kScaleDownPercent, kScaleDownPeriodS);
  if (keda) {
    s += "# KEDA computes ceil(query / threshold) replicas from the Prometheus query below.\n";
  } else {
    s += fmt::format(
        "# The Pods metric `{}` comes from prometheus-adapter; add this rule to its config:\n"
        "#   - seriesQuery: '{}{{namespace!=\"\",pod!=\"\"}}'\n"
        "#     resources: {{overrides: {{namespace: {{resource: namespace}}, pod: {{resource: "
        "pod}}}}}}\n"
        "#     name: {{matches: \".*\", as: \"{}\"}}\n"
        "#     metricsQuery: 'sum(rate(<<.Series>>{{<<.LabelMatchers>>}}[1m])) by "
        "(<<.GroupBy>>)'\n",
        kHpaMetric, rt.request_counter, kHpaMetric);
  }
  return s;
}

Result<std::vector<EmittedFile>> EmitK8sServe(const Plan& p, const EmitOptions& opt,
                                              const Catalog& catalog) {
  auto rtr = ResolveServeRuntime(p, catalog);
  if (!rtr) return rtr.error();
  const ServeRuntime& rt = *rtr;
  const std::string name = Slug(p.model);
  const bool gpu = rt.gpu;
  const std::string hf_model = HfModelId(p.model_ref);
  const bool hub_model = !LocalModel(p.model_ref) && (rt.engine == "vllm" || rt.engine == "tgi");
  const bool gated = hub_model && GatedModel(hf_model);
  const Scaling sc = ScalingFor(p, opt);

  ojson container = {{"name", "server"}, {"image", opt.image.empty() ? rt.image : opt.image}};
  container["command"] = ojson::array({rt.command.front()});
  ojson args = ojson::array();
  for (std::size_t i = 1; i < rt.command.size(); ++i) args.push_back(rt.command[i]);
  container["args"] = args;
  ojson ports = ojson::array({{{"name", "http"}, {"containerPort", kServePort}}});
  if (rt.metrics_port != kServePort)
    ports.push_back({{"name", "metrics"}, {"containerPort", rt.metrics_port}});
  container["ports"] = ports;
  ojson env = ojson::array({{{"name", "HF_HOME"}, {"value", kModelCacheDir}}});
  if (hub_model) env.push_back(HfTokenEnv(gated));
  container["env"] = env;
  const int gpus = gpu ? p.gpus_per_replica : 0;
  int cores = gpu ? kServeCoresPerGpu * gpus : 4;
  double ram = 16.0 * 1073741824.0;
  if (gpu) {
    if (const Accelerator* acc = catalog.FindAccelerator(p.accelerator)) {
      ram = kServeRamPerGpuMemory * acc->memory.value() * gpus;
    }
  } else {
    // A CPU replica is the whole instance: the planner's throughput uses all of its cores. Request
    // what the node can allocate, so no other pod shares it: the vCPUs less 1 (2 above 16) and
    // 90% of the RAM less 1 GiB for the kubelet, system daemons and the eviction threshold (GKE
    // and EKS reserve about that). An instance the catalog does not know keeps 4 cores, 16 GiB.
    for (const InstanceType& i : catalog.instances) {
      if (i.cloud != p.cloud || i.instance_type != p.instance_type || i.vcpus <= 0) continue;
      cores = std::max(1, i.vcpus - (i.vcpus > 16 ? 2 : 1));
      const double gib = 1073741824.0;  // whole GiB, rounded down: a request above allocatable
      ram = gib * std::max(1.0, std::floor((0.9 * i.ram.value() - gib) / gib));  // never schedules
      break;
    }
  }
  ojson res = {{"requests", {{"cpu", std::to_string(cores)}, {"memory", Gi(ram)}}}};
  if (gpu) res["limits"] = {{"nvidia.com/gpu", gpus}};
  container["resources"] = res;
  container["startupProbe"] = {{"httpGet", {{"path", rt.health_path}, {"port", kServePort}}},
                               {"periodSeconds", 10},
                               {"failureThreshold", 90}};
  container["readinessProbe"] = {{"httpGet", {{"path", rt.health_path}, {"port", kServePort}}},
                                 {"periodSeconds", 10}};
  container["volumeMounts"] =
      ojson::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}},
                    {{"name", "model-cache"}, {"mountPath", kModelCacheDir}}});
  const std::string pvc = name + "-model-cache";
  ojson volumes =
      ojson::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "16Gi"}}}},
                    {{"name", "model-cache"}, {"persistentVolumeClaim", {{"claimName", pvc}}}}});
  ojson pod = {{"containers", ojson::array({container})}};
  ojson config_map;
  if (!rt.files.empty()) {
    // Triton: build the TensorRT engine into the cache before the server starts (once).
    const std::string cm = name + "-serving-config";
    ojson data = ojson::object();
    for (const auto& f : rt.files) data[f.name] = f.contents;
    config_map = {
        {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", cm}}}, {"data", data}};
    volumes.push_back({{"name", "serving-config"}, {"configMap", {{"name", cm}}}});
    ojson init = {
        {"name", "build-engine"},
        {"image", kTensorRtImage},
        {"command", ojson::array({"/bin/sh", std::string(kConfigDir) + "/build-engine.sh"})},
        {"resources", {{"limits", {{"nvidia.com/gpu", gpus}}}}},
        {"volumeMounts", ojson::array({{{"name", "model-cache"}, {"mountPath", kModelCacheDir}},
                                       {{"name", "serving-config"}, {"mountPath", kConfigDir}}})}};
    pod["initContainers"] = ojson::array({init});
  }
  pod["volumes"] = volumes;
  ojson sel = NodeSelector(p, catalog);
  if (!sel.empty()) pod["nodeSelector"] = sel;
  if (gpu) pod["tolerations"] = GpuTolerations();
  ojson labels = {{"app", name}};
  ojson deploy = {{"apiVersion", "apps/v1"},
                  {"kind", "Deployment"},
                  {"metadata", {{"name", name}, {"labels", labels}}},
                  {"spec",
                   {{"replicas", sc.min_replicas},
                    {"selector", {{"matchLabels", labels}}},
                    {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}};
  ojson svc_ports =
      ojson::array({{{"name", "http"}, {"port", kServePort}, {"targetPort", kServePort}}});
  if (rt.metrics_port != kServePort)
    svc_ports.push_back(
        {{"name", "metrics"}, {"port", rt.metrics_port}, {"targetPort", rt.metrics_port}});
  ojson svc = {{"apiVersion", "v1"},
               {"kind", "Service"},
               {"metadata", {{"name", name}, {"labels", labels}}},
               {"spec", {{"selector", labels}, {"ports", svc_ports}}}};
  const double cache_bytes =
      std::max(50.0 * 1073741824.0, 2.0 * WeightBytes(p) + 10.0 * 1073741824.0);
  ojson claim = {{"apiVersion", "v1"},
                 {"kind", "PersistentVolumeClaim"},
                 {"metadata", {{"name", pvc}, {"labels", labels}}},
                 {"spec",
                  {{"accessModes", ojson::array({"ReadWriteMany"})},
                   {"resources", {{"requests", {{"storage", Gi(cache_bytes)}}}}}}}};
  ojson behavior = {{"scaleUp",
                     {{"stabilizationWindowSeconds", 0},
                      {"policies", ojson::array({{{"type", "Percent"},
                                                  {"value", kScaleUpPercent},
                                                  {"periodSeconds", kScaleUpPeriodS}}})}}},
                    {"scaleDown",
                     {{"stabilizationWindowSeconds", kScaleDownWindowS},
                      {"policies", ojson::array({{{"type", "Percent"},
                                                  {"value", kScaleDownPercent},
                                                  {"periodSeconds", kScaleDownPeriodS}}})},
                      {"selectPolicy", "Min"}}}};
  const bool keda = opt.autoscaler == "keda";
  ojson scaler;
  if (keda) {
    const std::string query =
        fmt::format("sum(rate({}{{pod=~\"{}-.*\"}}[1m]))", rt.request_counter, name);
    scaler = {
        {"apiVersion", "keda.sh/v1alpha1"},
        {"kind", "ScaledObject"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"scaleTargetRef", {{"name", name}}},
          {"minReplicaCount", sc.min_replicas},
          {"maxReplicaCount", sc.max_replicas},
          {"pollingInterval", 15},
          {"cooldownPeriod", kScaleDownWindowS},
          {"advanced", {{"horizontalPodAutoscalerConfig", {{"behavior", behavior}}}}},
          {"triggers",
           ojson::array({{{"type", "prometheus"},
                          {"metricType", "AverageValue"},
                          {"metadata",
                           {{"serverAddress", kPrometheus},
                            {"query", query},
                            {"threshold", fmt::format("{:.3f}", sc.target_per_replica)}}}}})}}}};
  } else {
    scaler = {
        {"apiVersion", "autoscaling/v2"},
        {"kind", "HorizontalPodAutoscaler"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
          {"minReplicas", sc.min_replicas},
          {"maxReplicas", sc.max_replicas},
          {"metrics",
           ojson::array({{{"type", "Pods"},
                          {"pods",
                           {{"metric", {{"name", kHpaMetric}}},
                            {"target",
                             {{"type", "AverageValue"},
                              {"averageValue", MilliQuantity(sc.target_per_replica)}}}}}}})},
          {"behavior", behavior}}}};
  }
  std::string s = Header(p, "Kubernetes serving manifests");
  s += fmt::format("# {} replica(s) x {} GPU(s) at peak; engine {} ({}).\n", p.replicas, gpus,
                   rt.engine, opt.image.empty() ? rt.image : opt.image);
  for (const auto& n : rt.notes) s += "# " + n + "\n";
  if (hub_model) {
    s += fmt::format(
        "# Hugging Face token: kubectl create secret generic {} --from-literal=token=hf_...{}\n",
        kHfSecret,
        gated ? " (required: gated model, accept its licence on the Hub first)"
              : " (optional: public model)");
  }
  s += fmt::format(
      "# Model cache: PVC {} (ReadWriteMany, so every replica reuses one download; needs a "
      "storage\n"
      "# class that offers it, e.g. EFS, Filestore, Azure Files or NFS).\n",
      pvc);
  s += Doc(claim);
  if (!config_map.is_null()) s += Doc(config_map);
  s += Doc(deploy) + Doc(svc);
  s += ScalingComment(p, rt, sc, keda) + Doc(scaler);
  return std::vector<EmittedFile>{{"k8s.yaml", s}};
}

std::vector<EmittedFile> EmitK8sTrain(const Plan& p, const EmitOptions& opt,
                                      const Catalog& catalog) {
  const std::string name = Slug(p.model) + "-train";
  const TrainLaunch launch = MakeTrainLaunch(p);
  const std::string cm = name + "-config";
  ojson data = ojson::object();
  for (const auto& f : launch.config_files) data[f.name] = f.contents;
  ojson config_map = {
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", cm}}}, {"data", data}};
  const bool pytorchjob = opt.k8s_training == "pytorchjob";
  // The Job gets the node rank from its completion index; the training operator sets
  // PET_NNODES, PET_NODE_RANK, MASTER_ADDR and MASTER_PORT itself (controller.v1/pytorch).
  const std::string script =
      (pytorchjob ? "export NNODES=\"$PET_NNODES\" NODE_RANK=\"$PET_NODE_RANK\"\n"
                  : "export NODE_RANK=\"$JOB_COMPLETION_INDEX\"\n") +
      launch.command + "\n";
  ojson env = ojson::array();
  if (!pytorchjob) {
    env.push_back({{"name", "NNODES"}, {"value", std::to_string(p.nodes)}});
    env.push_back({{"name", "MASTER_ADDR"}, {"value", name + "-0." + name}});
    env.push_back({{"name", "MASTER_PORT"}, {"value", "29500"}});
  }
  env.push_back({{"name", "GPUPLAN_CONFIG"}, {"value", kConfigDir}});
  env.push_back({{"name", "HF_HOME"}, {"value", std::string(kNvmeDir) + "/hf-cache"}});
  env.push_back(HfTokenEnv(!LocalModel(p.model_ref) && GatedModel(HfModelId(p.model_ref))));
  ojson container = {
      {"name", pytorchjob ? "pytorch" : "trainer"},
      {"image", opt.image.empty() ? kPytorchImage : opt.image},
      {"command", ojson::array({"/bin/bash", "-c", script})},
      {"env", env},
      {"resources",
       {{"requests", {{"cpu", std::to_string(p.cpu_cores)}, {"memory", Gi(p.ram_bytes)}}},
        {"limits", {{"nvidia.com/gpu", p.gpus_per_node}}}}},
      {"volumeMounts", ojson::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}},
                                     {{"name", "nvme"}, {"mountPath", kNvmeDir}},
                                     {{"name", "config"}, {"mountPath", kConfigDir}}})}};
  if (pytorchjob)
    container["ports"] = ojson::array({{{"name", "pytorchjob-port"}, {"containerPort", 23456}}});
  ojson pod = ojson::object();
  if (!pytorchjob) {
    pod["subdomain"] = name;
    pod["restartPolicy"] = "Never";
  }
  pod["containers"] = ojson::array({container});
  pod["volumes"] = ojson::array(
      {{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}},
       {{"name", "nvme"}, {"hostPath", {{"path", kNvmeDir}, {"type", "DirectoryOrCreate"}}}},
       {{"name", "config"}, {"configMap", {{"name", cm}}}}});
  pod["tolerations"] = GpuTolerations();
  ojson sel = NodeSelector(p, catalog);
  if (!sel.empty()) pod["nodeSelector"] = sel;
  ojson labels = {{"app", name}};
  ojson templ = {{"metadata", {{"labels", labels}}}, {"spec", pod}};
  std::string s;
  if (pytorchjob) {
    ojson specs = {{"Master", {{"replicas", 1}, {"restartPolicy", "Never"}, {"template", templ}}}};
    if (p.nodes > 1)
      specs["Worker"] = {
          {"replicas", p.nodes - 1}, {"restartPolicy", "Never"}, {"template", templ}};
    ojson job = {{"apiVersion", "kubeflow.org/v1"},
                 {"kind", "PyTorchJob"},
                 {"metadata", {{"name", name}, {"labels", labels}}},
                 {"spec",
                  {{"nprocPerNode", std::to_string(p.gpus_per_node)},
                   {"runPolicy", {{"backoffLimit", 0}, {"cleanPodPolicy", "None"}}},
                   {"pytorchReplicaSpecs", specs}}}};
    s = Header(p, "Kubeflow PyTorchJob (Master + Workers, one pod per node) + ConfigMap");
    s += fmt::format("# {} node(s) x {} GPU(s); layout tp {} pp {} dp {} ZeRO {}; {}.\n", p.nodes,
                     p.gpus_per_node, p.tp, p.pp, p.dp, p.zero_stage, launch.framework_note);
    s +=
        "# Needs the Kubeflow training operator (v1 API). The image must hold the training script\n"
        "# (--image); the config files come from the ConfigMap at " +
        std::string(kConfigDir) + ". Token: kubectl create secret generic " + kHfSecret +
        " --from-literal=token=hf_...\n";
    s += Doc(config_map) + Doc(job);
  } else {
    ojson job = {{"apiVersion", "batch/v1"},
                 {"kind", "Job"},
                 {"metadata", {{"name", name}, {"labels", labels}}},
                 {"spec",
                  {{"completionMode", "Indexed"},
                   {"completions", p.nodes},
                   {"parallelism", p.nodes},
                   {"backoffLimit", 0},
                   {"template", templ}}}};
    ojson svc = {{"apiVersion", "v1"},
                 {"kind", "Service"},
                 {"metadata", {{"name", name}}},
                 {"spec", {{"clusterIP", "None"}, {"selector", labels}}}};
    s = Header(p, "Kubernetes indexed Job (one pod per node) + headless Service + ConfigMap");
    s += fmt::format("# {} node(s) x {} GPU(s); layout tp {} pp {} dp {} ZeRO {}; {}.\n", p.nodes,
                     p.gpus_per_node, p.tp, p.pp, p.dp, p.zero_stage, launch.framework_note);
    s +=
        "# The image must hold the training script in its working directory (--image); the config\n"
        "# files come from the ConfigMap at " +
        std::string(kConfigDir) + ". Token: kubectl create secret generic " + kHfSecret +
        " --from-literal=token=hf_...\n";
    s += Doc(config_map) + Doc(job) + Doc(svc);
  }
  return {{"k8s.yaml", s}};
}

}  // namespace

Result<std::vector<EmittedFile>> EmitK8s(const Plan& p, const EmitOptions& opt,
                                         const Catalog& catalog) {
  if (p.kind == Kind::kServe) return EmitK8sServe(p, opt, catalog);
  return EmitK8sTrain(p, opt, catalog);
}

}  // namespace gpuplan::emit
