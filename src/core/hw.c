/* hw.c - hardware presets (vendor datasheets, dense peaks) and the roof. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_hw.h"

#include "names.h"

#define T 1e12 /* TFLOP/s, TB/s */
#define GB 1000000000ull
#define GIB 1073741824ull

/* Usable memory, one rule for every preset (RF_HW_USABLE_RULE). A vendor's
 * "80 GB" of HBM or GDDR is 80 GiB of DRAM, since memory parts come in
 * powers of two; a CUDA process is shown less, what the driver and ECC
 * leave. The book chapter budgets the H100 SXM at 79.65 GiB of its 80, and
 * every preset keeps that same fraction of its stated capacity:
 *     usable = stated GB, read as GiB, x 79.65 / 80.
 * The 80 GB cards get 79.65 GiB exactly, to the byte as --mem 79.65GiB. */
#define USABLE(gb) ((uint64_t)((gb) / 80.0 * 79.65 * GIB + 0.5))

/* Links (docs/accounting.md, "Many devices"): one direction of one device's
 * scale-up link, devices it joins, alpha 1 us a hop; between nodes the
 * default scale-out of InfiniBand NDR 400 Gb/s = 50 GB/s a device, 5 us. */
#define IB_NDR                                                                                     \
    .out_name = "InfiniBand NDR 400 Gb/s", .out_bw_bytes_per_s = 50e9, .out_latency_s = 5e-6,      \
    .up_latency_s = 1e-6
#define LINKS(nm, bw, dpn, src)                                                                    \
    .links = {.up_name = nm,                                                                       \
              .up_bw_bytes_per_s = (bw),                                                           \
              .devices_per_node = (dpn),                                                           \
              IB_NDR,                                                                              \
              .origin = src}
/* NVSwitch 3 and later (HGX H100/H200/H20/H800, HGX B200/B300, NVL72) reduce
 * in the switch (NVLink SHARP; NCCL's NVLS algorithm, NCCL 2.17+, sm90+): an
 * all-reduce's floor may take the in-switch algorithm (rf_coll_cost). */
#define NVLS_LINKS(nm, bw, dpn, src)                                                               \
    .links = {.up_name = nm,                                                                       \
              .up_bw_bytes_per_s = (bw),                                                           \
              .devices_per_node = (dpn),                                                           \
              IB_NDR,                                                                              \
              .up_switch_reduce = true,                                                            \
              .origin = src}
#define PCIE4                                                                                      \
    LINKS("PCIe Gen4 x16", 32e9, 8,                                                                \
          "no NVLink: PCIe Gen4 x16, 32 GB/s a direction "                                         \
          "(64 bidirectional), 8 cards a server assumed")

/* Blackwell's tensor cores run both fp4 formats at one rate. */
#define FP4(p) [RF_NVFP4] = (p), [RF_MXFP4] = (p)

/* Dense peaks at boost clock, per device. FP8 rows use the e4m3 slot; the
 * GeForce cards use the FP32-accumulate tensor rates (what cuBLAS runs).
 * board_power_w is the TDP of the same datasheets, the top of a stated range
 * (H100 PCIe 300-350 W, H200 "up to 700 W", MI250X 500-560 W); the AMD
 * figures (MI300X 750 W, MI250X) are not from a datasheet we could read. */
static const rf_hw presets[] = {
    {.name = "h100-sxm",
     .source = "NVIDIA H100 SXM5 80GB datasheet/whitepaper (dense, 1830 MHz boost); "
               "80 GB HBM3, 79.65 GiB usable as the book chapter budgets",
     .peak_flops_per_s = {[RF_FP64] = 67 * T,
                          [RF_FP32] = 66.9 * T,
                          [RF_TF32] = 494.7 * T,
                          [RF_BF16] = 989.4 * T,
                          [RF_FP16] = 989.4 * T,
                          [RF_FP8_E4M3] = 1978.9 * T,
                          [RF_INT8] = 1978.9 * T},
     .bw_bytes_per_s = 3.35 * T,
     .mem_bytes = USABLE(80),
     .mem_stated_gb = 80,
     .mem_usable = true,
     .board_power_w = 700,
     .l2_bytes = 50000000, /* 50 MB L2: NVIDIA H100 Tensor Core GPU Architecture whitepaper */
     NVLS_LINKS("NVLink 4", 450e9, 8,
                "NVLink 4, 18 links: 450 GB/s a direction (900 bidirectional), H100 SXM5 "
                "datasheet; 8 GPUs an HGX board")},
    {.name = "h100-pcie",
     .source = "NVIDIA H100 PCIe 80GB datasheet (sparse figures halved), HBM2e 2.0 TB/s",
     .peak_flops_per_s = {[RF_FP64] = 51 * T,
                          [RF_FP32] = 51.2 * T,
                          [RF_TF32] = 378 * T,
                          [RF_BF16] = 756 * T,
                          [RF_FP16] = 756 * T,
                          [RF_FP8_E4M3] = 1513 * T,
                          [RF_INT8] = 1513 * T},
     .bw_bytes_per_s = 2.0 * T,
     .mem_bytes = USABLE(80),
     .mem_stated_gb = 80,
     .mem_usable = true,
     .board_power_w = 350,
     LINKS("PCIe Gen5 x16", 64e9, 8,
           "PCIe Gen5 x16, 64 GB/s a direction (128 bidirectional), H100 PCIe datasheet; the"
           " NVLink bridge joins pairs only and is not used; 8 cards a server assumed")},
    {.name = "h200",
     .source = "NVIDIA H200 SXM 141GB (compute as H100 SXM; 4.8 TB/s HBM3e)",
     .peak_flops_per_s = {[RF_FP64] = 67 * T,
                          [RF_FP32] = 67 * T,
                          [RF_TF32] = 494.7 * T,
                          [RF_BF16] = 989.4 * T,
                          [RF_FP16] = 989.4 * T,
                          [RF_FP8_E4M3] = 1978.9 * T,
                          [RF_INT8] = 1978.9 * T},
     .bw_bytes_per_s = 4.8 * T,
     .mem_bytes = USABLE(141),
     .mem_stated_gb = 141,
     .mem_usable = true,
     .board_power_w = 700,
     .l2_bytes = 50000000, /* 50 MB L2: NVIDIA H100 Tensor Core GPU Architecture whitepaper */
     NVLS_LINKS("NVLink 4", 450e9, 8,
                "NVLink 4, 18 links: 900 GB/s bidirectional, 450 a direction (MLCommons "
                "H200-SXM-141GBx8 system description); 8 GPUs an HGX board")},
    {.name = "a100-80gb",
     .source = "NVIDIA A100 SXM4 80GB datasheet r4 (dense; no fp8), HBM2e 2.039 TB/s",
     .peak_flops_per_s = {[RF_FP64] = 19.5 * T,
                          [RF_FP32] = 19.5 * T,
                          [RF_TF32] = 156 * T,
                          [RF_BF16] = 312 * T,
                          [RF_FP16] = 312 * T,
                          [RF_INT8] = 624 * T},
     .bw_bytes_per_s = 2.039 * T,
     .mem_bytes = USABLE(80),
     .mem_stated_gb = 80,
     .mem_usable = true,
     .board_power_w = 400,
     LINKS("NVLink 3", 300e9, 8,
           "NVLink 3, 12 links: 300 GB/s a direction (600 bidirectional), A100 datasheet; 8 "
           "GPUs an HGX board")},
    {.name = "a100-40gb",
     .source = "NVIDIA A100 SXM4 40GB datasheet r4 (dense; no fp8), HBM2 1.555 TB/s",
     .peak_flops_per_s = {[RF_FP64] = 19.5 * T,
                          [RF_FP32] = 19.5 * T,
                          [RF_TF32] = 156 * T,
                          [RF_BF16] = 312 * T,
                          [RF_FP16] = 312 * T,
                          [RF_INT8] = 624 * T},
     .bw_bytes_per_s = 1.555 * T,
     .mem_bytes = USABLE(40),
     .mem_stated_gb = 40,
     .mem_usable = true,
     .board_power_w = 400,
     LINKS("NVLink 3", 300e9, 8,
           "NVLink 3, 12 links: 300 GB/s a direction (600 bidirectional), A100 datasheet; 8 "
           "GPUs an HGX board")},
    {.name = "l40s",
     .source = "NVIDIA L40S datasheet (unstarred = dense), 48 GB GDDR6 at 864 GB/s",
     .peak_flops_per_s = {[RF_FP32] = 91.6 * T,
                          [RF_TF32] = 183 * T,
                          [RF_BF16] = 362.05 * T,
                          [RF_FP16] = 362.05 * T,
                          [RF_FP8_E4M3] = 733 * T,
                          [RF_INT8] = 733 * T},
     .bw_bytes_per_s = 0.864 * T,
     .mem_bytes = USABLE(48),
     .mem_stated_gb = 48,
     .mem_usable = true,
     .board_power_w = 350,
     PCIE4},
    {.name = "rtx4090",
     .source = "NVIDIA RTX 4090, Ada third-party tables (FP32-accumulate tensor rates: "
               "bf16 165.2, fp8 330.3), 24 GB GDDR6X at 1.008 TB/s",
     .peak_flops_per_s = {[RF_FP32] = 82.6 * T,
                          [RF_TF32] = 82.6 * T,
                          [RF_BF16] = 165.2 * T,
                          [RF_FP16] = 165.2 * T,
                          [RF_FP8_E4M3] = 330.3 * T,
                          [RF_INT8] = 660.6 * T},
     .bw_bytes_per_s = 1.008 * T,
     .mem_bytes = USABLE(24),
     .mem_stated_gb = 24,
     .mem_usable = true,
     .board_power_w = 450,
     PCIE4},
    {.name = "rtx3090",
     .source = "NVIDIA RTX 3090, derived from GeForce Ampere ratios (FP32 accumulate; "
               "unverified), 24 GB GDDR6X at 0.936 TB/s",
     .peak_flops_per_s = {[RF_FP32] = 35.6 * T,
                          [RF_TF32] = 35.6 * T,
                          [RF_BF16] = 71 * T,
                          [RF_FP16] = 71 * T,
                          [RF_INT8] = 284 * T},
     .bw_bytes_per_s = 0.936 * T,
     .mem_bytes = USABLE(24),
     .mem_stated_gb = 24,
     .mem_usable = true,
     .board_power_w = 350,
     LINKS("PCIe Gen4 x16", 32e9, 8,
           "PCIe Gen4 x16, 32 GB/s a direction; the NVLink 3 bridge (56.25 GB/s a direction)"
           " joins pairs only and is not used; 8 cards a server assumed")},
    {.name = "b200",
     .source = "NVIDIA HGX B200 1000 W spec sheet (sparse halved; fp4 18 PF sparse, 9 dense), "
               "HBM3e 7.7 TB/s, 180 GB",
     .peak_flops_per_s = {[RF_FP32] = 75 * T,
                          [RF_TF32] = 1100 * T,
                          [RF_BF16] = 2250 * T,
                          [RF_FP16] = 2250 * T,
                          [RF_FP8_E4M3] = 4500 * T,
                          [RF_INT8] = 4500 * T,
                          FP4(9000 * T)},
     .bw_bytes_per_s = 7.7 * T,
     .mem_bytes = USABLE(180),
     .mem_stated_gb = 180,
     .mem_usable = true,
     .board_power_w = 1000,
     .l2_bytes = 126000000, /* 126 MB: the Blackwell tuning guide's GB200 GPU (no B200 sheet
                               states one; docs/hardware.md) */
     NVLS_LINKS("NVLink 5", 900e9, 8,
                "NVLink 5, 18 links: 900 GB/s a direction (1.8 TB/s bidirectional), HGX B200 spec"
                " sheet; 8 GPUs an HGX board")},
    {.name = "mi300x",
     .source = "AMD Instinct MI300X, ROCm docs mi300.md (dense), HBM3 5.3 TB/s, 192 GB",
     .peak_flops_per_s = {[RF_FP64] = 163.4 * T,
                          [RF_FP32] = 163.4 * T,
                          [RF_TF32] = 653.7 * T,
                          [RF_BF16] = 1307.4 * T,
                          [RF_FP16] = 1307.4 * T,
                          [RF_FP8_E4M3] = 2614.9 * T,
                          [RF_INT8] = 2614.9 * T},
     .bw_bytes_per_s = 5.3 * T,
     .mem_bytes = USABLE(192),
     .mem_stated_gb = 192,
     .mem_usable = true,
     .board_power_w = 750,
     LINKS("Infinity Fabric", 448e9, 8,
           "Infinity Fabric: 7 xGMI links x 64 GB/s = 448 GB/s a direction (ROCm mi300.md, "
           "8-GPU OAM platform)")},
    {.name = "mi250x",
     .source = "AMD Instinct MI250X OAM (both GCDs; derived from per-CU rates), 128 GB HBM2e "
               "at 3.2 TB/s",
     .peak_flops_per_s = {[RF_FP64] = 95.7 * T,
                          [RF_FP32] = 95.7 * T,
                          [RF_BF16] = 383 * T,
                          [RF_FP16] = 383 * T,
                          [RF_INT8] = 383 * T},
     .bw_bytes_per_s = 3.2 * T,
     .mem_bytes = USABLE(128),
     .mem_stated_gb = 128,
     .mem_usable = true,
     .board_power_w = 560,
     LINKS("Infinity Fabric", 350e9, 4,
           "Infinity Fabric, 350 GB/s a direction all-to-all (ml-engineering network table; "
           "50 GB/s a link); 4 OAMs a node assumed")},
    {.name = "tpu-v5e",
     .source = "Google Cloud TPU v5e chip docs: bf16 197 TFLOP/s, int8 393 TOP/s, 16 GB HBM2 "
               "at 819 GB/s",
     .peak_flops_per_s = {[RF_BF16] = 197 * T, [RF_INT8] = 393 * T},
     .bw_bytes_per_s = 0.819 * T,
     .mem_bytes = USABLE(16),
     .mem_stated_gb = 16,
     .mem_usable = true,
     LINKS("ICI", 100e9, 8,
           "ICI 1600 Gbps a chip (Cloud TPU v5e docs) read as 200 GB/s over both directions,"
           " 100 a direction (unverified); 8 chips a host")},
    /* ---- 2025-26 parts (docs/hardware.md: sources and confidence) ---- */
    {.name = "h20",
     .source = "NVIDIA H20 (Hopper, China market; no public datasheet: secondary sources agree): "
               "bf16 148, fp8 296 TFLOP/s dense, 96 GB HBM3 at 4.0 TB/s, 400 W",
     .peak_flops_per_s = {[RF_FP64] = 1 * T,
                          [RF_FP32] = 44 * T,
                          [RF_TF32] = 74 * T,
                          [RF_BF16] = 148 * T,
                          [RF_FP16] = 148 * T,
                          [RF_FP8_E4M3] = 296 * T,
                          [RF_INT8] = 296 * T},
     .bw_bytes_per_s = 4.0 * T,
     .mem_bytes = USABLE(96),
     .mem_stated_gb = 96,
     .mem_usable = true,
     .board_power_w = 400,
     NVLS_LINKS("NVLink 4", 450e9, 8,
                "NVLink 4: 900 GB/s bidirectional, 450 a direction (as H100 SXM); 8 GPUs an HGX "
                "board")},
    {.name = "h800",
     .source = "NVIDIA H800 SXM: H100 SXM's GH100 and clocks (dense bf16 989.4, fp8 1978.9) "
               "with fp64 cut to 1 TFLOP/s and NVLink to 400 GB/s; 80 GB HBM3 at 3.35 TB/s",
     .peak_flops_per_s = {[RF_FP64] = 1 * T,
                          [RF_FP32] = 66.9 * T,
                          [RF_TF32] = 494.7 * T,
                          [RF_BF16] = 989.4 * T,
                          [RF_FP16] = 989.4 * T,
                          [RF_FP8_E4M3] = 1978.9 * T,
                          [RF_INT8] = 1978.9 * T},
     .bw_bytes_per_s = 3.35 * T,
     .mem_bytes = USABLE(80),
     .mem_stated_gb = 80,
     .mem_usable = true,
     .board_power_w = 700,
     NVLS_LINKS("NVLink 4 (8 links)", 200e9, 8,
                "NVLink 4 cut to 8 links: 400 GB/s bidirectional, 200 a direction; 8 GPUs an HGX "
                "board")},
    {.name = "b300",
     .source = "NVIDIA HGX B300 (Blackwell Ultra), a GPU, as glennklockwood.com tabulates it: "
               "fp4 13.125 PF dense (18 sparse), fp8 4.5, bf16 2.25 PF; 288 GB HBM3e at 8 TB/s; "
               "1400 W",
     .peak_flops_per_s = {[RF_FP64] = 1.25 * T,
                          [RF_FP32] = 75 * T,
                          [RF_TF32] = 1125 * T,
                          [RF_BF16] = 2250 * T,
                          [RF_FP16] = 2250 * T,
                          [RF_FP8_E4M3] = 4500 * T,
                          FP4(13125 * T)},
     .bw_bytes_per_s = 8.0 * T,
     .mem_bytes = USABLE(288),
     .mem_stated_gb = 288,
     .mem_usable = true,
     .board_power_w = 1400,
     .l2_bytes = 126000000, /* B200's, the Blackwell tuning guide's: B300's is not stated
                               (docs/hardware.md) */
     NVLS_LINKS("NVLink 5", 900e9, 8,
                "NVLink 5, 18 links: 900 GB/s a direction (1.8 TB/s bidirectional); 8 GPUs an HGX "
                "board")},
    {.name = "gb200",
     .source = "NVIDIA GB200 NVL72, one of its 72 GPUs (GB200 spec table, sparse halved): fp4 "
               "10 PF, fp8 5, bf16 2.5 PF dense; 186 GB HBM3e at 8 TB/s; 1200 W",
     .peak_flops_per_s = {[RF_FP64] = 45 * T,
                          [RF_FP32] = 80 * T,
                          [RF_TF32] = 1250 * T,
                          [RF_BF16] = 2500 * T,
                          [RF_FP16] = 2500 * T,
                          [RF_FP8_E4M3] = 5000 * T,
                          [RF_INT8] = 5000 * T,
                          FP4(10000 * T)},
     .bw_bytes_per_s = 8.0 * T,
     .mem_bytes = USABLE(186),
     .mem_stated_gb = 186,
     .mem_usable = true,
     .board_power_w = 1200,
     NVLS_LINKS("NVLink 5 (NVL72)", 900e9, 72,
                "NVLink 5, 18 links: 900 GB/s a direction; the NVL72 rack's NVLink switches join "
                "all 72 GPUs")},
    {.name = "gb300",
     .source = "NVIDIA GB300 NVL72, one of its 72 GPUs (rack: 1.1 EF dense fp4, 360 PF fp8, 576 "
               "TB/s): fp4 15 PF, fp8 5, bf16 2.5 PF dense; 288 GB HBM3e at 8 TB/s; 1400 W",
     .peak_flops_per_s = {[RF_FP64] = 1.25 * T,
                          [RF_FP32] = 80 * T,
                          [RF_TF32] = 1250 * T,
                          [RF_BF16] = 2500 * T,
                          [RF_FP16] = 2500 * T,
                          [RF_FP8_E4M3] = 5000 * T,
                          FP4(15000 * T)},
     .bw_bytes_per_s = 8.0 * T,
     .mem_bytes = USABLE(288),
     .mem_stated_gb = 288,
     .mem_usable = true,
     .board_power_w = 1400,
     NVLS_LINKS("NVLink 5 (NVL72)", 900e9, 72,
                "NVLink 5, 18 links: 900 GB/s a direction; the NVL72 rack's NVLink switches join "
                "all 72 GPUs")},
    {.name = "rtx-5090",
     .source = "NVIDIA GeForce RTX 5090 (GB202, 170 SMs): 3352 AI TOPS = fp4 sparse; FP32-"
               "accumulate tensor rates as GeForce halves them: bf16 209.5, fp8 419, fp4 1676 "
               "dense; 32 GB GDDR7 at 1.792 TB/s; 575 W",
     .peak_flops_per_s = {[RF_FP32] = 104.8 * T,
                          [RF_TF32] = 104.8 * T,
                          [RF_BF16] = 209.5 * T,
                          [RF_FP16] = 209.5 * T,
                          [RF_FP8_E4M3] = 419 * T,
                          [RF_INT8] = 838 * T,
                          FP4(1676 * T)},
     .bw_bytes_per_s = 1.792 * T,
     .mem_bytes = USABLE(32),
     .mem_stated_gb = 32,
     .mem_usable = true,
     .board_power_w = 575,
     LINKS("PCIe Gen5 x16", 64e9, 8,
           "no NVLink: PCIe Gen5 x16, 64 GB/s a direction (128 bidirectional), 8 cards a "
           "server assumed")},
    {.name = "rtx-pro-6000",
     .source = "NVIDIA RTX PRO 6000 Blackwell (GB202, 188 SMs): 4000 AI TOPS = fp4 sparse, so "
               "fp4 2000, fp8 1000, bf16 500 dense (no GeForce halving); fp32 125; 96 GB GDDR7 "
               "at 1.792 TB/s; 600 W",
     .peak_flops_per_s = {[RF_FP32] = 125 * T,
                          [RF_TF32] = 250 * T,
                          [RF_BF16] = 500 * T,
                          [RF_FP16] = 500 * T,
                          [RF_FP8_E4M3] = 1000 * T,
                          [RF_INT8] = 1000 * T,
                          FP4(2000 * T)},
     .bw_bytes_per_s = 1.792 * T,
     .mem_bytes = USABLE(96),
     .mem_stated_gb = 96,
     .mem_usable = true,
     .board_power_w = 600,
     LINKS("PCIe Gen5 x16", 64e9, 8,
           "no NVLink: PCIe Gen5 x16, 64 GB/s a direction (128 bidirectional), 8 cards a "
           "server assumed")},
    {.name = "l4",
     .source = "NVIDIA L4 datasheet (sparse halved): bf16 121, fp8 242.5, int8 242.5, tf32 60 "
               "TFLOP/s dense, fp32 30.3; 24 GB GDDR6 at 300 GB/s; 72 W",
     .peak_flops_per_s = {[RF_FP32] = 30.3 * T,
                          [RF_TF32] = 60 * T,
                          [RF_BF16] = 121 * T,
                          [RF_FP16] = 121 * T,
                          [RF_FP8_E4M3] = 242.5 * T,
                          [RF_INT8] = 242.5 * T},
     .bw_bytes_per_s = 0.3 * T,
     .mem_bytes = USABLE(24),
     .mem_stated_gb = 24,
     .mem_usable = true,
     .board_power_w = 72,
     PCIE4},
    {.name = "mi325x",
     .source = "AMD Instinct MI325X: MI300X's CDNA 3 compute (ROCm mi300.md, dense) with 256 GB "
               "HBM3E at 6 TB/s; 1000 W",
     .peak_flops_per_s = {[RF_FP64] = 163.4 * T,
                          [RF_FP32] = 163.4 * T,
                          [RF_TF32] = 653.7 * T,
                          [RF_BF16] = 1307.4 * T,
                          [RF_FP16] = 1307.4 * T,
                          [RF_FP8_E4M3] = 2614.9 * T,
                          [RF_INT8] = 2614.9 * T},
     .bw_bytes_per_s = 6.0 * T,
     .mem_bytes = USABLE(256),
     .mem_stated_gb = 256,
     .mem_usable = true,
     .board_power_w = 1000,
     LINKS("Infinity Fabric", 448e9, 8,
           "Infinity Fabric: 7 xGMI links x 64 GB/s = 448 GB/s a direction, as MI300X's "
           "8-GPU OAM platform")},
    {.name = "mi355x",
     .source = "AMD Instinct MI355X (CDNA 4, 256 CUs at 2.4 GHz, dense): bf16 2516.6, fp8 "
               "5033.2, mxfp4 10066.3 TFLOP/s (no nvfp4); 288 GB HBM3E at 8 TB/s; 1400 W",
     .peak_flops_per_s = {[RF_FP64] = 78.6 * T,
                          [RF_FP32] = 157.3 * T,
                          [RF_BF16] = 2516.6 * T,
                          [RF_FP16] = 2516.6 * T,
                          [RF_FP8_E4M3] = 5033.2 * T,
                          [RF_INT8] = 5033.2 * T,
                          [RF_MXFP4] = 10066.3 * T},
     .bw_bytes_per_s = 8.0 * T,
     .mem_bytes = USABLE(288),
     .mem_stated_gb = 288,
     .mem_usable = true,
     .board_power_w = 1400,
     LINKS("Infinity Fabric", 537.6e9, 8,
           "Infinity Fabric: 7 links x 153.6 GB/s bidirectional = 537.6 GB/s a direction "
           "(unverified); 8 OAMs a platform")},
    {.name = "tpu-v6e",
     .source = "Google Cloud TPU v6e (Trillium) docs, a chip: bf16 918 TFLOP/s, int8 1836 "
               "TOP/s, 32 GB HBM at 1638 GB/s",
     .peak_flops_per_s = {[RF_BF16] = 918 * T, [RF_INT8] = 1836 * T},
     .bw_bytes_per_s = 1.638 * T,
     .mem_bytes = USABLE(32),
     .mem_stated_gb = 32,
     .mem_usable = true,
     LINKS("ICI", 400e9, 8,
           "ICI 800 GB/s bidirectional a chip (Cloud TPU v6e docs), 400 a direction; 8 chips "
           "a host")},
    {.name = "gaudi3",
     .source = "Intel Gaudi 3 OAM (Hot Chips 2024): bf16 and fp8 matrix 1835 TFLOP/s, bf16 "
               "vector 28.7; 128 GB HBM2e at 3.67 TB/s; 900 W air-cooled",
     .peak_flops_per_s = {[RF_BF16] = 1835 * T, [RF_FP8_E4M3] = 1835 * T},
     .bw_bytes_per_s = 3.67 * T,
     .mem_bytes = USABLE(128),
     .mem_stated_gb = 128,
     .mem_usable = true,
     .board_power_w = 900,
     .links = {.up_name = "RoCE 21 x 200GbE",
               .up_bw_bytes_per_s = 525e9,
               .up_latency_s = 1e-6,
               .out_name = "RoCE 3 x 200GbE",
               .out_bw_bytes_per_s = 75e9,
               .out_latency_s = 5e-6,
               .devices_per_node = 8,
               .origin = "24 x 200GbE RoCE on the chip: 21 to the other 7 of an 8-card server "
                         "(525 GB/s a direction), 3 out (75 GB/s)"}},
    {.name = "apple-m4-max",
     .source = "Apple M4 Max, 40-core GPU: 546 GB/s to up to 128 GB of unified memory (shared "
               "with the CPU; macOS's GPU limit is lower, give --mem); fp32 = fp16 = bf16 18.4 "
               "TFLOP/s derived (unpublished)",
     .peak_flops_per_s = {[RF_FP32] = 18.4 * T, [RF_BF16] = 18.4 * T, [RF_FP16] = 18.4 * T},
     .bw_bytes_per_s = 0.546 * T,
     .mem_bytes = USABLE(128),
     .mem_stated_gb = 128,
     .mem_usable = true,
     .links = {.up_name = "none (one chip a machine)",
               .up_bw_bytes_per_s = 10e9,
               .up_latency_s = 5e-6,
               .out_name = "Thunderbolt 5 (80 Gb/s)",
               .out_bw_bytes_per_s = 10e9,
               .out_latency_s = 5e-6,
               .devices_per_node = 1,
               .origin = "one chip a machine; machines joined by Thunderbolt 5, 80 Gb/s = 10 "
                         "GB/s a direction"}},
};

size_t rf_hw_preset_count(void) { return sizeof presets / sizeof presets[0]; }

const rf_hw *rf_hw_preset_at(size_t i) { return i < rf_hw_preset_count() ? &presets[i] : NULL; }

static const char *preset_name(size_t i) { return presets[i].name; }

rf_status rf_hw_preset(const char *name, rf_hw *out, rf_err *err)
{
    for (size_t i = 0; i < rf_hw_preset_count(); i++)
        if (name && !strcmp(name, presets[i].name)) {
            *out = presets[i];
            return RF_OK;
        }
    char known[512];
    rf__join_names(known, sizeof known, rf_hw_preset_count(), preset_name);
    return rf_err_set(err, RF_EINVAL, "unknown hardware '%s' (known: %s; or a profile .json)",
                      name ? name : "", known);
}

rf_status rf_hw_validate(const rf_hw *hw, rf_err *err)
{
    if (!(hw->bw_bytes_per_s >= RF_HW_BW_MIN && hw->bw_bytes_per_s <= RF_HW_BW_MAX))
        return rf_err_set(err, hw->bw_bytes_per_s > 0 ? RF_ERANGE : RF_EINVAL,
                          "%s: bandwidth (%g bytes/s) must be within [%g, %g]", hw->name,
                          hw->bw_bytes_per_s, RF_HW_BW_MIN, RF_HW_BW_MAX);
    int any = 0;
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        double p = hw->peak_flops_per_s[k];
        if (p != 0 && !(p >= RF_HW_PEAK_MIN && p <= RF_HW_PEAK_MAX))
            return rf_err_set(err, p > 0 ? RF_ERANGE : RF_EINVAL,
                              "%s: %s peak (%g FLOP/s) must be 0 (none) or within [%g, %g]",
                              hw->name, rf_dtype_name((rf_dtype_kind)k), p, RF_HW_PEAK_MIN,
                              RF_HW_PEAK_MAX);
        any |= p > 0;
    }
    double r = hw->ridge_override;
    if (r != 0 && !(r >= RF_HW_RIDGE_MIN && r <= RF_HW_RIDGE_MAX))
        return rf_err_set(err, RF_ERANGE, "%s: ridge (%g FLOP/byte) must be within [%g, %g]",
                          hw->name, r, RF_HW_RIDGE_MIN, RF_HW_RIDGE_MAX);
    if (!any && !(r > 0))
        return rf_err_set(err, RF_EINVAL, "%s: no compute peak given", hw->name);
    return RF_OK;
}

rf_dtype_kind rf_hw_peak_kind(rf_dtype_kind math)
{
    return rf_dtype_is_fp8(math) ? RF_FP8_E4M3 : math;
}

rf_status rf_hw_roof(const rf_hw *hw, rf_dtype_kind math, rf_roof *out, rf_err *err)
{
    rf_status s = rf_hw_validate(hw, err);
    if (s)
        return s;
    rf_roof r = {.math = math, .bw_bytes_per_s = hw->bw_bytes_per_s, .math_asked = math};
    if (hw->ridge_override > 0) {
        r.ridge = hw->ridge_override;
        r.peak_flops_per_s = r.ridge * r.bw_bytes_per_s;
        r.ridge_given = 1;
    } else {
        r.peak_flops_per_s = hw->peak_flops_per_s[rf_hw_peak_kind(math)];
        if (!(r.peak_flops_per_s > 0))
            return rf_err_set(err, RF_EUNAVAIL,
                              "%s has no %s compute peak (give --peak TFLOPS, or another dtype)",
                              hw->name, rf_dtype_name(math));
        r.ridge = r.peak_flops_per_s / r.bw_bytes_per_s;
    }
    *out = r;
    return RF_OK;
}

/* Significand bits (without the implicit one) and exponent bits of each
 * math dtype; an integer dtype is exact in a float of its bits - 1
 * significand bits, and needs no exponent. The fp4 formats count their
 * dequantized values: an e2m1 element times its block scale, mxfp4's e8m0
 * (a power of two: 1 bit of significand, 8 of exponent) and nvfp4's e4m3
 * (1 + 3 significand bits, and the fp32 tensor scale's exponent range), so
 * only bf16 and wider hold them, never fp8. */
static const struct {
    int mant, exp;
    bool is_float;
} prec[RF_DTYPE_COUNT] = {
    [RF_FP64] = {52, 11, true},   [RF_FP32] = {23, 8, true}, [RF_TF32] = {10, 8, true},
    [RF_BF16] = {7, 8, true},     [RF_FP16] = {10, 5, true}, [RF_FP8_E4M3] = {3, 4, true},
    [RF_FP8_E5M2] = {2, 5, true}, [RF_INT8] = {7, 0, false}, [RF_INT4] = {3, 0, false},
    [RF_MXFP4] = {1, 8, true},    [RF_NVFP4] = {4, 8, true},
};
_Static_assert(sizeof prec / sizeof prec[0] == RF_DTYPE_COUNT, "one precision per dtype");

rf_status rf_hw_math_dtype(const rf_hw *hw, rf_dtype_kind asked, bool strict, rf_dtype_kind *used,
                           rf_err *err)
{
    if (hw->ridge_override > 0 || hw->peak_flops_per_s[rf_hw_peak_kind(asked)] > 0) {
        *used = asked;
        return RF_OK;
    }
    if (strict)
        return rf_err_set(err, RF_EUNAVAIL,
                          "%s has no %s compute peak (give --peak TFLOPS, or another dtype)",
                          hw->name, rf_dtype_name(asked));
    int best = -1;
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        double p = hw->peak_flops_per_s[k];
        if (!prec[k].is_float || !(p > 0) || prec[k].mant < prec[asked].mant ||
            prec[k].exp < prec[asked].exp || (rf_dtype_is_fp4((rf_dtype_kind)k) && k != (int)asked))
            continue; /* another fp4 format's scales differ: never a substitute */
        if (best < 0 || p > hw->peak_flops_per_s[best] ||
            (p == hw->peak_flops_per_s[best] && prec[k].mant < prec[best].mant))
            best = k;
    }
    if (best < 0)
        return rf_err_set(err, RF_EUNAVAIL,
                          "%s has no %s compute peak and none of a float dtype that holds "
                          "%s values (give --peak TFLOPS)",
                          hw->name, rf_dtype_name(asked), rf_dtype_name(asked));
    *used = (rf_dtype_kind)best;
    return RF_OK;
}

rf_status rf_hw_roof_for(const rf_hw *hw, rf_dtype_kind asked, bool strict, rf_roof *out,
                         rf_err *err)
{
    rf_dtype_kind used = asked;
    rf_status s = rf_hw_validate(hw, err);
    if (s || (s = rf_hw_math_dtype(hw, asked, strict, &used, err)) ||
        (s = rf_hw_roof(hw, used, out, err)))
        return s;
    out->math_asked = asked;
    out->math_fallback = used != asked;
    return RF_OK;
}

rf_point rf_roof_place(const rf_roof *roof, double flops, double bytes)
{
    rf_point p;
    p.intensity = bytes > 0 ? flops / bytes : 0;
    double mem_roof = p.intensity * roof->bw_bytes_per_s;
    p.attainable_flops_per_s =
        bytes > 0 && mem_roof < roof->peak_flops_per_s ? mem_roof : roof->peak_flops_per_s;
    p.compute_s = flops / roof->peak_flops_per_s;
    p.memory_s = bytes / roof->bw_bytes_per_s;
    p.floor_s = p.compute_s > p.memory_s ? p.compute_s : p.memory_s;
    p.regime = bytes == 0 || p.intensity >= roof->ridge ? RF_COMPUTE_BOUND : RF_MEMORY_BOUND;
    return p;
}

const char *rf_regime_name(rf_regime r)
{
    return r == RF_COMPUTE_BOUND ? "compute-bound" : "memory-bound";
}

const char *rf_hw_tables_system(const char *name)
{
    static const struct {
        const char *preset, *system;
    } systems[] = {
        {"h100-sxm", "h100_sxm"}, {"h200", "h200_sxm"}, {"b200", "b200_sxm"}, {"b300", "b300_sxm"}};
    for (size_t i = 0; name && i < sizeof systems / sizeof systems[0]; i++)
        if (!strcmp(name, systems[i].preset))
            return systems[i].system;
    return NULL;
}
