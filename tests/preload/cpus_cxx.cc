// SPDX-License-Identifier: MIT
// cpus_cxx.cc: prints std::thread::hardware_concurrency(), which libstdc++ answers with
// get_nprocs() on glibc (`punctual run --cpus` interposes it).
#include <cstdio>
#include <thread>

int main()
{
	std::printf("%u\n", std::thread::hardware_concurrency());
	return 0;
}
