/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend: which device and port a domain uses, checked once at
 * start-up with one clear line (and what to do) for every way it can fail.
 * The GID of a connection is picked by librdmacm from the IP address the
 * endpoint binds or resolves; rdma_gid_index, when set, is checked here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "fabric/verbs/verbs.h"

/*
 * The path rdma_cm gave a connected QP, for the log: the source GID index
 * it picked (RoCE, or IB with a GRH) or the remote LID (IB), and the path
 * MTU. Operators check GID selection and MTU by it (docs/verbs.md).
 */
void verbs_qp_path_str(struct ibv_qp *qp, char *buf, size_t cap)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (qp == NULL || ibv_query_qp(qp, &a, IBV_QP_AV | IBV_QP_PATH_MTU, &ia) != 0) {
		snprintf(buf, cap, "path unknown");
		return;
	}
	if (a.ah_attr.is_global)
		snprintf(buf, cap, "QP %u, sgid index %u, path MTU %s", qp->qp_num,
			 a.ah_attr.grh.sgid_index, verbs_mtu_str(a.path_mtu));
	else
		snprintf(buf, cap, "QP %u, dlid %u, path MTU %s", qp->qp_num, a.ah_attr.dlid,
			 verbs_mtu_str(a.path_mtu));
}

const char *verbs_mtu_str(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return "256";
	case IBV_MTU_512:
		return "512";
	case IBV_MTU_1024:
		return "1024";
	case IBV_MTU_2048:
		return "2048";
	case IBV_MTU_4096:
		return "4096";
	}
	return "?";
}

static const char *verbs_port_state_str(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_DOWN:
		return "DOWN";
	case IBV_PORT_INIT:
		return "INIT";
	case IBV_PORT_ARMED:
		return "ARMED";
	case IBV_PORT_ACTIVE:
		return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER:
		return "ACTIVE_DEFER";
	default:
		return "NOP";
	}
}

/* Log at error level when the user asked for verbs, at info level for auto. */
#define verbs_dev_log(quiet, fmt, ...)                                  \
	do {                                                            \
		if (quiet)                                              \
			log_info("fab", "verbs: " fmt, ##__VA_ARGS__);  \
		else                                                    \
			log_error("fab", "verbs: " fmt, ##__VA_ARGS__); \
	} while (0)

static int verbs_gid_check(struct ibv_context *ctx, uint8_t port, int index, bool quiet)
{
	const char *dev = ibv_get_device_name(ctx->device);
	struct ibv_port_attr pa;
	union ibv_gid gid;
	static const uint8_t zero[16];

	if (ibv_query_port(ctx, port, &pa))
		return -EIO;
	if (index >= pa.gid_tbl_len || ibv_query_gid(ctx, port, index, &gid) ||
	    !memcmp(gid.raw, zero, sizeof(zero))) {
		verbs_dev_log(quiet, "GID index %d not found on %s port %u (table has %d entries): "
			      "list them with 'weft doctor' and fix rdma_gid_index, or set it to -1",
			      index, dev, port, pa.gid_tbl_len);
		return -ENOENT;
	}
	return 0;
}

/* 0 if the port can carry traffic, else -errno with one line of advice. */
static int verbs_port_check(struct ibv_context *ctx, uint8_t port, bool quiet)
{
	const char *dev = ibv_get_device_name(ctx->device);
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int rc;

	rc = ibv_query_device(ctx, &da);
	if (rc) {
		verbs_dev_log(quiet, "%s: query device: %s", dev, strerror(rc));
		return -rc;
	}
	if (port < 1 || port > da.phys_port_cnt) {
		verbs_dev_log(quiet, "%s has no port %u (ports 1..%u): fix rdma_port", dev, port,
			      da.phys_port_cnt);
		return -ENODEV;
	}
	rc = ibv_query_port(ctx, port, &pa);
	if (rc) {
		verbs_dev_log(quiet, "%s port %u: query port: %s", dev, port, strerror(rc));
		return -rc;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		verbs_dev_log(quiet, "%s port %u is %s, not ACTIVE: check the cable and the "
			      "subnet manager (IB) or the netdev link (RoCE: 'ip link', "
			      "'rdma link')", dev, port, verbs_port_state_str(pa.state));
		return -ENETDOWN;
	}
	return 0;
}

int verbs_dev_select(const struct fab_domain_attr *attr, bool quiet, struct ibv_context **ctx_out,
		     uint8_t *port_out)
{
	struct ibv_context **list;
	int n = 0, rc = -ENODEV;
	uint8_t port = (uint8_t)(attr->rdma_port > 0 ? attr->rdma_port : 1);
	char names[256] = "";

	list = rdma_get_devices(&n);
	if (!list || n == 0) {
		verbs_dev_log(quiet, "no RDMA device found (no driver loaded, or a kernel without "
			      "CONFIG_INFINIBAND; see 'weft doctor', 'rdma link'); set "
			      "ms_type=tcp or auto to use TCP");
		if (list)
			rdma_free_devices(list);
		return -ENODEV;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]->device);
		size_t l = strlen(names);

		snprintf(names + l, sizeof(names) - l, "%s%s", l ? ", " : "", name);
	}
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]->device);

		if (attr->rdma_device && strcmp(attr->rdma_device, name))
			continue;
		if (!attr->rdma_device) {
			/* auto: the first device whose port is up */
			if (verbs_port_check(list[i], port, true))
				continue;
		} else {
			rc = verbs_port_check(list[i], port, quiet);
			if (rc)
				break;
		}
		if (attr->rdma_gid_index >= 0) {
			rc = verbs_gid_check(list[i], port, attr->rdma_gid_index, quiet);
			if (rc)
				break;
		}
		*ctx_out = list[i];
		*port_out = port;
		rdma_free_devices(list);
		return 0;
	}
	if (rc == -ENODEV) {
		if (attr->rdma_device)
			verbs_dev_log(quiet, "RDMA device '%s' not found (have: %s): fix rdma_device "
				      "or leave it empty to pick one", attr->rdma_device, names);
		else
			verbs_dev_log(quiet, "no RDMA device with an ACTIVE port %u (have: %s): "
				      "check links with 'weft doctor'", port, names);
	}
	rdma_free_devices(list);
	return rc;
}

/* Registration failed: if memlock is the reason, say so and how to fix it. */
void verbs_memlock_advice(struct verbs_domain *vd, size_t want, int err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (err == ENOMEM || err == EPERM || err == EFAULT || err == EAGAIN)) {
		verbs_log_err(vd, "registering %zu bytes failed (%s): the memlock limit is %llu KiB, "
			      "too low; raise it: 'ulimit -l unlimited', LimitMEMLOCK=infinity in "
			      "the systemd unit, or '* - memlock unlimited' in "
			      "/etc/security/limits.conf", want, strerror(err),
			      (unsigned long long)(rl.rlim_cur / 1024));
		return;
	}
	verbs_log_err(vd, "registering %zu bytes failed: %s", want, strerror(err));
}
