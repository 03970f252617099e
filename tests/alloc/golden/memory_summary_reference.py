# Regenerates the golden tables of tests/alloc/summary_test.cpp: an independent port of
# PyTorch 2.x torch.cuda.memory.memory_summary with graft's CPU labels (python3 memory_summary_reference.py).
# Port of torch.cuda.memory.memory_summary (2.x) with graft's CPU labels; widths kept at 75.
import json, sys
def summary(stats, device=0, abbreviated=False):
    def _format_size(sz, pref_sz):
        prefixes = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
        prefix = prefixes[0]
        for new_prefix in prefixes[1:]:
            if pref_sz < 768 * 1024:
                break
            prefix = new_prefix
            sz //= 1024
            pref_sz /= 1024
        return f"{sz:6d} {prefix}"
    def _format_count(cnt, pref_cnt):
        prefixes = [" ", "K", "M"]
        prefix = prefixes[0]
        for new_prefix in prefixes[1:]:
            if pref_cnt < 750 * 1000:
                break
            prefix = new_prefix
            cnt //= 1000
            pref_cnt /= 1000
        return f"{cnt:7d} {prefix} "
    metrics_to_display = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", "CPU reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", "CPU reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    lines = []
    lines.append("=" * 75)
    lines.append(" {_:16} graft CPU memory summary, device ID {device:<20d} ")
    lines.append("-" * 75)
    lines.append("  {_:9} CPU OOMs: {num_ooms:<13d} | {_:6} raw alloc retries: {num_alloc_retries:<9d}  ")
    lines.append("=" * 75)
    lines.append("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ")
    for metric_key, metric_name, formatter in metrics_to_display:
        lines.append("-" * 75)
        submetrics = [("all", metric_name)]
        if not abbreviated:
            submetrics.append(("large_pool", "      from large pool"))
            submetrics.append(("small_pool", "      from small pool"))
        cp = pp = ap = fp = None
        for submetric_key, submetric_name in submetrics:
            prefix = metric_key + "." + submetric_key + "."
            current = stats[prefix + "current"]; peak = stats[prefix + "peak"]
            allocated = stats[prefix + "allocated"]; freed = stats[prefix + "freed"]
            if cp is None:
                cp, pp, ap, fp = current, peak, allocated, freed
            lines.append(f" {submetric_name:<21} | {formatter(current, cp)} | {formatter(peak, pp)} | "
                         f"{formatter(allocated, ap)} | {formatter(freed, fp)} ")
    for metric_key, metric_name, formatter in [("oversize_allocations", "Oversize allocations", _format_count),
                                               ("oversize_segments", "Oversize CPU segments", _format_count)]:
        lines.append("-" * 75)
        prefix = metric_key + "."
        current = stats[prefix + "current"]; peak = stats[prefix + "peak"]
        allocated = stats[prefix + "allocated"]; freed = stats[prefix + "freed"]
        lines.append(f" {metric_name:<21} | {formatter(current, current)} | {formatter(peak, peak)} | "
                     f"{formatter(allocated, allocated)} | {formatter(freed, freed)} ")
    lines.append("=" * 75)
    fmt_dict = {"_": "", "device": device}
    for k, v in stats.items():
        fmt_dict[k.replace(".", "-")] = v
    return "|" + "|\n|".join(lines).format(**fmt_dict) + "|\n"

K=1024; M=K*K
def zero():
    m={}
    for k in ["allocation","segment","active","inactive_split","allocated_bytes","reserved_bytes","active_bytes","inactive_split_bytes","requested_bytes"]:
        for p in ["all","small_pool","large_pool"]:
            for f in ["current","peak","allocated","freed"]: m[f"{k}.{p}.{f}"]=0
    for k in ["oversize_allocations","oversize_segments"]:
        for f in ["current","peak","allocated","freed"]: m[f"{k}.{f}"]=0
    for k in ["num_alloc_retries","num_ooms","num_sync_all_streams","num_device_alloc","num_device_free"]: m[k]=0
    m["max_split_size"]=-1
    return m
def set4(m,k,a,b,c,d):
    m[k+".current"],m[k+".peak"],m[k+".allocated"],m[k+".freed"]=a,b,c,d
# (1) the ScriptedStats checkpoint after a=1000 (freed), b=3000, c=5 MiB
e=zero()
set4(e,"allocation.all",2,2,3,1); set4(e,"allocation.small_pool",1,2,2,1); set4(e,"allocation.large_pool",1,1,1,0)
set4(e,"active.all",2,2,3,1); set4(e,"active.small_pool",1,2,2,1); set4(e,"active.large_pool",1,1,1,0)
set4(e,"segment.all",2,2,2,0); set4(e,"segment.small_pool",1,1,1,0); set4(e,"segment.large_pool",1,1,1,0)
set4(e,"inactive_split.all",3,3,3,0); set4(e,"inactive_split.small_pool",2,2,2,0); set4(e,"inactive_split.large_pool",1,1,1,0)
set4(e,"inactive_split_bytes.all",17*M-3072,17*M-3072,17*M,3072); set4(e,"inactive_split_bytes.small_pool",2*M-3072,2*M-1024,2*M,3072); set4(e,"inactive_split_bytes.large_pool",15*M,15*M,15*M,0)
for k in ["allocated_bytes","active_bytes"]:
    set4(e,k+".all",5*M+3072,5*M+3072,5*M+4096,1024); set4(e,k+".small_pool",3072,4096,4096,1024); set4(e,k+".large_pool",5*M,5*M,5*M,0)
set4(e,"requested_bytes.all",5*M+3000,5*M+3000,5*M+4000,1000); set4(e,"requested_bytes.small_pool",3000,4000,4000,1000); set4(e,"requested_bytes.large_pool",5*M,5*M,5*M,0)
set4(e,"reserved_bytes.all",22*M,22*M,22*M,0); set4(e,"reserved_bytes.small_pool",2*M,2*M,2*M,0); set4(e,"reserved_bytes.large_pool",20*M,20*M,20*M,0)
e["num_device_alloc"]=2
# (2) synthetic: large values, ooms and retries
s=zero()
for i,k in enumerate(["allocation","segment","active","inactive_split"]):
    set4(s,k+".all",900000+i,2500000,3*10**9+7,12); set4(s,k+".small_pool",800000,1000,999999,5); set4(s,k+".large_pool",100000+i,2499000,749999,7)
for i,k in enumerate(["allocated_bytes","reserved_bytes","active_bytes","inactive_split_bytes","requested_bytes"]):
    set4(s,k+".all",3*1024**3+i,5*1024**4,7*1024**5+123,767*1024); set4(s,k+".small_pool",1000,2*M,768*K,100); set4(s,k+".large_pool",3*1024**3,5*1024**4-2*M,7*1024**5,767*1024-100)
set4(s,"oversize_allocations",3,800000,1200000,999); set4(s,"oversize_segments",1,2,3,2)
s["num_ooms"]=12; s["num_alloc_retries"]=345
out={"scripted":summary(e),"scripted_abbrev":summary(e,abbreviated=True),"synthetic":summary(s),"synthetic_map":s}
pass
print(out["scripted"]); print(out["synthetic"])
