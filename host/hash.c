/* hash.c - see hash.h. */
#include "host/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

struct hasher {
	EVP_MD_CTX *ctx;
};

struct hasher *hasher_new(void)
{
	struct hasher *h = xmalloc(sizeof(*h));
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		BUG("cannot initialise sha256 (libcrypto)");
	return h;
}

void hasher_add(struct hasher *h, const void *data, size_t n)
{
	EVP_DigestUpdate(h->ctx, data, n);
}

void hasher_adds(struct hasher *h, const char *s)
{
	hasher_add(h, s, strlen(s) + 1);
}

int hasher_add_file(struct hasher *h, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		hasher_add(h, buf, (size_t)n);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return 0;
}

void hasher_done(struct hasher *h, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(h->ctx, md, &len);
	EVP_MD_CTX_free(h->ctx);
	free(h);
	for (unsigned i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	out[64] = '\0';
}
