/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A peer for the monitors' Raft port (tests/test_mon_raft_auth.sh,
 * docs/security.md "The Raft port"): an attacker, and the honest
 * recording the replay case needs.
 *
 *   raft_peer MODE --to IP:PORT --bind IP [options]
 *
 *   raw       canonical raft's own TCP handshake (as raft id --from), then a
 *             RequestVote for term --term and an AppendEntries whose entry is
 *             a map increment creating pool "evil" at epoch --epoch: what
 *             raft's own transport would take from anyone.
 *   wrongkey  the Weft handshake as mon.x with a random key, then raw raft
 *             bytes anyway.
 *   replay    an honest handshake with the mon. key of --keyring (as mon.z,
 *             raft id --from, to raft id --to-id), recording the frames it
 *             sends; then a new connection that replays them.
 *   hold      open --count connections and send nothing for --seconds.
 *
 * --fsid UUID: the cluster's fsid for the handshake (the conf's; zeros when unset).
 *
 * raw, wrongkey and replay pass (exit 0) when the monitor closes the
 * attacking connection without having sent DONE (so no stream reached
 * raft), within 10 s. hold prints "held N closed_early M" (connections the
 * monitor closed before --seconds) and exits 0. Anything else exits 1 with
 * one line. Every wait is bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth/handshake.h"
#include "auth/keyring.h"
#include "common/clock.h"
#include "mon/map.h"
#include "mon/mon_raft_wire.h"

#define PEER_WAIT_MS  10000
#define PEER_HOLD_MAX 1000

struct peer_args {
	const char *mode, *to, *bind, *keyring;
	uint8_t fsid[AUTH_FSID_LEN];
	unsigned long long from, to_id, term, epoch;
	unsigned int count, seconds;
};

static struct peer_args args = {
    .from = 99, .to_id = 1, .term = 1000000, .epoch = 1000, .count = 10, .seconds = 3};

static int peer_split(const char *text, char *ip, size_t cap, unsigned int *port)
{
	const char *colon = strrchr(text, ':');

	if (colon == NULL || (size_t)(colon - text) >= cap)
		return -1;
	memcpy(ip, text, (size_t)(colon - text));
	ip[colon - text] = '\0';
	*port = (unsigned int)strtoul(colon + 1, NULL, 10);
	return 0;
}

static int peer_connect(void)
{
	struct sockaddr_in to = {.sin_family = AF_INET}, from = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = PEER_WAIT_MS / 1000};
	char ip[64];
	unsigned int port;
	int fd, one = 1;

	if (peer_split(args.to, ip, sizeof(ip), &port) != 0 ||
	    inet_pton(AF_INET, ip, &to.sin_addr) != 1 ||
	    inet_pton(AF_INET, args.bind, &from.sin_addr) != 1) {
		fprintf(stderr, "raft_peer: --to IP:PORT and --bind IP (IPv4)\n");
		exit(2);
	}
	to.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		fprintf(stderr, "raft_peer: connect %s from %s: %s\n", args.to, args.bind,
			strerror(errno));
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Both ends of fd as the monitor formats them ("ip:port"). */
static void peer_addrs(int fd, char *local, char *remote, size_t cap)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	char ip[INET_ADDRSTRLEN];

	getsockname(fd, (struct sockaddr *)&a, &len);
	inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
	snprintf(local, cap, "%s:%u", ip, ntohs(a.sin_port));
	len = sizeof(a);
	getpeername(fd, (struct sockaddr *)&a, &len);
	inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
	snprintf(remote, cap, "%s:%u", ip, ntohs(a.sin_port));
}

/* Send it all; a closed connection is not an error here (the monitor may refuse mid-way). */
static void peer_send(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len > 0) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		b += n;
		len -= (size_t)n;
	}
}

static void peer_send_frame(int fd, const void *payload, size_t len)
{
	uint8_t hdr[MON_RAFT_HDR_LEN];

	mon_raft_frame_hdr(hdr, (uint32_t)len);
	peer_send(fd, hdr, sizeof(hdr));
	peer_send(fd, payload, len);
}

/* One frame: its length, 0 when the monitor closed the connection, -1 on a timeout or junk. */
static ssize_t peer_recv_frame(int fd, uint8_t *buf, size_t cap)
{
	uint8_t hdr[MON_RAFT_HDR_LEN];
	struct proto_err err;
	uint32_t len;
	ssize_t n;

	n = recv(fd, hdr, sizeof(hdr), MSG_WAITALL);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 0;
	if (n != (ssize_t)sizeof(hdr) || mon_raft_frame_hdr_decode(hdr, &err, &len) != 0 ||
	    len > cap)
		return -1;
	n = recv(fd, buf, len, MSG_WAITALL);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 0;
	return n == (ssize_t)len ? n : -1;
}

/* Pass when the monitor closes fd (EOF or reset) within the wait, sending nothing more. */
static int peer_expect_closed(int fd, const char *what)
{
	uint64_t deadline = clock_now_ms() + PEER_WAIT_MS;
	uint8_t b[4096];

	while (clock_now_ms() < deadline) {
		ssize_t n = recv(fd, b, sizeof(b), 0);

		if (n == 0 || (n < 0 && errno == ECONNRESET)) {
			printf("%s: refused (the monitor closed the connection)\n", what);
			close(fd);
			return 0;
		}
		if (n > 0) {
			printf("%s: FAIL: the monitor sent %zd more bytes\n", what, n);
			close(fd);
			return 1;
		}
		if (errno != EAGAIN && errno != EINTR)
			break;
	}
	printf("%s: FAIL: the connection is still open after %d ms\n", what, PEER_WAIT_MS);
	close(fd);
	return 1;
}

static void put64(uint8_t **p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

/* canonical raft's TCP handshake, a RequestVote and an AppendEntries carrying a map increment. */
static size_t peer_raft_bytes(uint8_t *buf, size_t cap)
{
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_POOL_SET};
	char addr[64];
	void *ibuf = NULL;
	size_t ilen = 0, alen, elen;
	uint8_t *p = buf;

	snprintf(addr, sizeof(addr), "%s:1", args.bind);
	alen = (strlen(addr) + 1 + 7) & ~(size_t)7;
	mon_inc_init(&inc);
	inc.epoch = (uint32_t)args.epoch;
	snprintf(inc.reason, sizeof(inc.reason), "raft_peer");
	op.pool.id = 999;
	op.pool.size = 1;
	op.pool.min_size = 1;
	op.pool.pg_num = 8;
	snprintf(op.pool.name, sizeof(op.pool.name), "evil");
	if (mon_inc_add(&inc, &op) != 0 || mon_inc_encode(&inc, &ibuf, &ilen) != 0) {
		fprintf(stderr, "raft_peer: cannot encode the increment\n");
		exit(1);
	}
	mon_inc_free(&inc);
	elen = (4 + ilen + 7) & ~(size_t)7; /* the monitor's entry framing */
	if (cap < 24 + alen + 16 + 40 + 16 + 48 + 16 + elen) {
		free(ibuf);
		return 0;
	}
	/* raft's own transport: protocol 1, our id, the padded address */
	put64(&p, 1);
	put64(&p, args.from);
	put64(&p, alen);
	memset(p, 0, alen);
	memcpy(p, addr, strlen(addr));
	p += alen;
	/* RequestVote (type 3): a huge term would depose any leader */
	put64(&p, 3);
	put64(&p, 40);
	put64(&p, args.term);
	put64(&p, args.from);
	put64(&p, 1u << 30);
	put64(&p, args.term);
	put64(&p, 0);
	/* AppendEntries (type 1): prev 0/0, one entry at term --term */
	put64(&p, 1);
	put64(&p, 6 * 8 + 16);
	put64(&p, args.term);
	put64(&p, 0);
	put64(&p, 0);
	put64(&p, 1u << 30);
	put64(&p, 1); /* batch: one entry */
	put64(&p, args.term);
	*p++ = 1; /* RAFT_COMMAND */
	memset(p, 0, 3);
	p += 3;
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(elen >> (8 * i));
	put64(&p, 0); /* the header's last 8 bytes (raft sizes one u64 more than it writes) */
	memset(p, 0, elen);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(ilen >> (8 * i));
	memcpy(p + 4, ibuf, ilen);
	p += elen;
	free(ibuf);
	return (size_t)(p - buf);
}

static int peer_raw(void)
{
	static uint8_t b[8192];
	size_t n = peer_raft_bytes(b, sizeof(b));
	int fd = peer_connect();

	peer_send(fd, b, n);
	return peer_expect_closed(fd, "raw raft bytes");
}

/* HELLO as entity, with a fresh nonce: the client side of the handshake. */
static int peer_hello(int fd, struct auth_hs *hs, const char *entity, const struct auth_key *k)
{
	struct auth_hs_bind bind = {.method = AUTH_METHOD_KEY};
	uint8_t out[MON_RAFT_FRAME_MAX];
	size_t len;

	snprintf(bind.client, sizeof(bind.client), "%s", entity);
	snprintf(bind.server, sizeof(bind.server), "mon.");
	memcpy(bind.fsid, args.fsid, sizeof(bind.fsid));
	peer_addrs(fd, bind.client_addr, bind.server_addr, sizeof(bind.client_addr));
	if (auth_hs_client_start(hs, &bind, k, NULL, 0, out, sizeof(out), &len) != 0)
		return -1;
	peer_send_frame(fd, out, len);
	return 0;
}

static int peer_wrongkey(void)
{
	static uint8_t b[8192];
	uint8_t in[MON_RAFT_FRAME_MAX], out[MON_RAFT_FRAME_MAX];
	struct proto_err err;
	struct auth_key k;
	struct auth_hs hs;
	size_t len, n;
	ssize_t got;
	int fd = peer_connect();

	auth_key_generate(&k);
	if (peer_hello(fd, &hs, "mon.x", &k) != 0)
		return 1;
	got = peer_recv_frame(fd, in, sizeof(in));
	if (got <= 0) {
		printf("wrong key: FAIL: no CHALLENGE (%zd)\n", got);
		return 1;
	}
	if (auth_hs_client_on_challenge(&hs, in, (size_t)got, &err, out, sizeof(out), &len) != 0) {
		printf("wrong key: FAIL: CHALLENGE does not decode: %s\n", err.msg);
		return 1;
	}
	peer_send_frame(fd, out, len);
	/* and raft's bytes at once, as if the proof had passed */
	n = peer_raft_bytes(b, sizeof(b));
	peer_send(fd, b, n);
	return peer_expect_closed(fd, "wrong key");
}

static int peer_replay(void)
{
	uint8_t in[MON_RAFT_FRAME_MAX], hello[MON_RAFT_FRAME_MAX], proof[MON_RAFT_FRAME_MAX];
	uint8_t ident[MON_RAFT_FRAME_MAX];
	size_t hello_len, proof_len, ident_len;
	const struct auth_keyring_entry *e;
	struct mon_raft_ident id = {0};
	struct auth_keyring kr;
	struct proto_err err;
	struct auth_hs hs;
	char why[512];
	ssize_t got;
	int fd;

	auth_keyring_init(&kr);
	if (args.keyring == NULL || auth_keyring_load(&kr, args.keyring, why, sizeof(why)) != 0 ||
	    (e = auth_keyring_find(&kr, "mon.")) == NULL) {
		fprintf(stderr, "raft_peer: replay needs --keyring with mon.\n");
		return 2;
	}
	/* 1. honest, recorded: what a wiretap on the Raft port would capture */
	fd = peer_connect();
	if (peer_hello(fd, &hs, "mon.z", &e->key) != 0)
		return 1;
	/* the HELLO just sent, again from the state (its nonce is in hs.bind) */
	{
		struct auth_hs_hello h = {.version = AUTH_HS_VERSION, .method = AUTH_METHOD_KEY};
		struct proto_enc enc;

		memcpy(h.client, hs.bind.client, sizeof(h.client));
		memcpy(h.server, hs.bind.server, sizeof(h.server));
		memcpy(h.nonce_c, hs.bind.nonce_c, sizeof(h.nonce_c));
		proto_enc_init(&enc, hello, sizeof(hello));
		auth_hs_hello_encode(&enc, &h);
		proto_enc_finish(&enc, &hello_len);
	}
	got = peer_recv_frame(fd, in, sizeof(in));
	if (got <= 0 || auth_hs_client_on_challenge(&hs, in, (size_t)got, &err, proof,
						    sizeof(proof), &proof_len) != 0) {
		printf("replay: FAIL: the honest handshake got no CHALLENGE\n");
		return 1;
	}
	peer_send_frame(fd, proof, proof_len);
	got = peer_recv_frame(fd, in, sizeof(in));
	if (got <= 0 || auth_hs_client_on_done(&hs, in, (size_t)got, &err) != 0) {
		printf("replay: FAIL: the honest handshake (with the mon. key) got no DONE\n");
		return 1;
	}
	id.from_id = args.from;
	snprintf(id.from_addr, sizeof(id.from_addr), "%s:1", args.bind);
	id.to_id = args.to_id;
	mon_raft_ident_encode(&hs.session, &id, ident, sizeof(ident), &ident_len);
	peer_send_frame(fd, ident, ident_len);
	close(fd);
	printf("replay: recorded an honest handshake (%zu + %zu + %zu bytes)\n", hello_len,
	       proof_len, ident_len);
	/* 2. the replay: the monitor's fresh nonce makes the recorded proof worthless */
	fd = peer_connect();
	peer_send_frame(fd, hello, hello_len);
	got = peer_recv_frame(fd, in, sizeof(in));
	if (got <= 0) {
		printf("replay: FAIL: no CHALLENGE to the replayed HELLO\n");
		return 1;
	}
	peer_send_frame(fd, proof, proof_len);
	peer_send_frame(fd, ident, ident_len);
	auth_keyring_free(&kr);
	return peer_expect_closed(fd, "replayed handshake");
}

static int peer_hold(void)
{
	static int fds[PEER_HOLD_MAX];
	uint64_t end = clock_now_ms() + (uint64_t)args.seconds * 1000;
	unsigned int n = args.count > PEER_HOLD_MAX ? PEER_HOLD_MAX : args.count;
	unsigned int closed = 0;

	for (unsigned int i = 0; i < n; i++)
		fds[i] = peer_connect();
	while (clock_now_ms() < end)
		usleep(50000);
	for (unsigned int i = 0; i < n; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		char c;

		if (poll(&p, 1, 0) == 1 && recv(fds[i], &c, 1, MSG_DONTWAIT) <= 0)
			closed++;
		close(fds[i]);
	}
	printf("held %u closed_early %u\n", n, closed);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"to", required_argument, NULL, 't'},
	    {"bind", required_argument, NULL, 'b'},
	    {"keyring", required_argument, NULL, 'k'},
	    {"from", required_argument, NULL, 'f'},
	    {"to-id", required_argument, NULL, 'i'},
	    {"term", required_argument, NULL, 'T'},
	    {"epoch", required_argument, NULL, 'e'},
	    {"count", required_argument, NULL, 'n'},
	    {"seconds", required_argument, NULL, 's'},
	    {"fsid", required_argument, NULL, 'F'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			args.to = optarg;
			break;
		case 'b':
			args.bind = optarg;
			break;
		case 'k':
			args.keyring = optarg;
			break;
		case 'f':
			args.from = strtoull(optarg, NULL, 10);
			break;
		case 'i':
			args.to_id = strtoull(optarg, NULL, 10);
			break;
		case 'T':
			args.term = strtoull(optarg, NULL, 10);
			break;
		case 'e':
			args.epoch = strtoull(optarg, NULL, 10);
			break;
		case 'n':
			args.count = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 's':
			args.seconds = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'F':
			if (mon_uuid_parse(optarg, args.fsid) != 0) {
				fprintf(stderr, "raft_peer: --fsid %s is not a UUID\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "raft_peer: unknown option (see the comment at the top)\n");
			return 2;
		}
	}
	if (optind + 1 != argc || args.to == NULL || args.bind == NULL) {
		fprintf(stderr, "usage: raft_peer raw|wrongkey|replay|hold --to IP:PORT --bind IP "
				"[--keyring F] [--from ID] [--to-id ID] [--term T] [--epoch E] "
				"[--count N] [--seconds S] [--fsid UUID]\n");
		return 2;
	}
	args.mode = argv[optind];
	if (!strcmp(args.mode, "raw"))
		return peer_raw();
	if (!strcmp(args.mode, "wrongkey"))
		return peer_wrongkey();
	if (!strcmp(args.mode, "replay"))
		return peer_replay();
	if (!strcmp(args.mode, "hold"))
		return peer_hold();
	fprintf(stderr, "raft_peer: unknown mode '%s'\n", args.mode);
	return 2;
}
