#!/usr/bin/env bash
# Guest side (inside the rdma-vm VM): the fabric suite on the verbs backend,
# over rxe0 at 198.18.0.1. WEFT_BUILD is the host build directory.
set -uo pipefail
: "${WEFT_BUILD:?WEFT_BUILD must name the build directory}"
echo "== verbs suite in VM: $(uname -r), $(nproc) vCPU, devices: $(ls /sys/class/infiniband 2> /dev/null | tr '\n' ' ')"
ulimit -l unlimited
"$WEFT_BUILD/tests/test_fabric_tcp" verbs
