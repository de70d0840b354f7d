/* jhash of include/linux/jhash.h for the suite's load balancers: the mix and final rounds, jhash_3words. */
#ifndef HXDP_JHASH_H
#define HXDP_JHASH_H

#include <linux/types.h>

#define JHASH_INITVAL 0xdeadbeef

static __always_inline __u32 rol32(__u32 word, unsigned int shift)
{
	return (word << shift) | (word >> ((-shift) & 31));
}

#define JHASH_MIX(a, b, c)                   \
	{                                    \
		a -= c; a ^= rol32(c, 4); c += b;  \
		b -= a; b ^= rol32(a, 6); a += c;  \
		c -= b; c ^= rol32(b, 8); b += a;  \
		a -= c; a ^= rol32(c, 16); c += b; \
		b -= a; b ^= rol32(a, 19); a += c; \
		c -= b; c ^= rol32(b, 4); b += a;  \
	}

#define JHASH_FINAL(a, b, c)                \
	{                                   \
		c ^= b; c -= rol32(b, 14);  \
		a ^= c; a -= rol32(c, 11);  \
		b ^= a; b -= rol32(a, 25);  \
		c ^= b; c -= rol32(b, 16);  \
		a ^= c; a -= rol32(c, 4);   \
		b ^= a; b -= rol32(a, 14);  \
		c ^= b; c -= rol32(b, 24);  \
	}

static __always_inline __u32 jhash_3words(__u32 a, __u32 b, __u32 c, __u32 initval)
{
	a += JHASH_INITVAL + initval;
	b += JHASH_INITVAL + initval;
	c += JHASH_INITVAL + initval;
	JHASH_FINAL(a, b, c);
	return c;
}

#endif
