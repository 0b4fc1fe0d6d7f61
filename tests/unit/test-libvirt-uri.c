/* test-libvirt-uri.c - which libvirt URIs name another machine (its guests'
 * console and channel then go over TCP: engine/vm-libvirt.c). */
#include <stdlib.h>
#include <string.h>

#include "engine/vm.h"
#include "tests/unit/check.h"

static int host_is(const char *uri, const char *want)
{
	char *h = vm_libvirt_uri_host(uri);
	int ok = want ? h && !strcmp(h, want) : !h;
	free(h);
	return ok;
}

TEST(local)
{
	CHECK(host_is("qemu:///system", NULL), "qemu:///system is here");
	CHECK(host_is("qemu:///session", NULL), "qemu:///session is here");
	CHECK(host_is("qemu+unix:///system?socket=/run/x", NULL), "a unix socket URI is here");
	CHECK(host_is("qemu://localhost/system", NULL), "localhost is here");
	CHECK(host_is(NULL, NULL), "no URI is here");
	CHECK(host_is("garbage", NULL), "a string without :// is here");
}

TEST(remote)
{
	CHECK(host_is("qemu+ssh://host/system", "host"), "ssh host");
	CHECK(host_is("qemu+ssh://root@host.example.org/system", "host.example.org"), "a user is dropped");
	CHECK(host_is("qemu+ssh://me@host:2222/system?keyfile=/k", "host"), "a port is dropped");
	CHECK(host_is("qemu+tcp://10.0.0.7/system", "10.0.0.7"), "an address");
	CHECK(host_is("qemu+ssh://[fe80::1]:22/system", "fe80::1"), "a v6 address in brackets");
}

TEST_MAIN()
