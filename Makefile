# Thin wrapper: installs missing Debian packages (as root, with apt-get), configures,
# builds, and runs the default analysis (`make run`) or the test suite (`make test`).

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PIPESIM := $(BUILD_DIR)/cli/pipesim

# Everything the build and tests need from Debian.
DEB_PACKAGES := build-essential cmake pkg-config catch2 libfmt-dev nlohmann-json3-dev \
                libboost-dev libsimgrid-dev libgraphviz-dev graphviz \
                libpng-dev libexpat1-dev clang libclang-rt-14-dev chromium \
                python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest

.PHONY: all deps configure build run test bench reproduce format clean

all: build

deps:
	@missing=""; \
	for pkg in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi; \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(PIPESIM) list
	@echo
	@for s in 1f1b zb-h1 zb-h2; do $(PIPESIM) analyze -s $$s -p 4 -m 12 --costs 1,1,1 || exit $$?; echo; done
	$(PIPESIM) analyze -s interleaved-1f1b -p 4 -m 12 -v 2 --costs 1,1,1
	@echo
	$(PIPESIM) compare -s 1f1b,interleaved-1f1b,zb-h1,zb-v -p 4 -m 16 --model llama2-7b \
		--gpu h100-sxm --mb 1 -t 2 --dp 2

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	experiments/bench/run.sh $(BUILD_DIR)

# Regenerates experiments/*/report.md (not part of `make test`).
reproduce: build
	cmake --build $(BUILD_DIR) --target reproduce
	$(BUILD_DIR)/experiments/reproduce/reproduce -j 2

format:
	find fileio schedules models sim viz calibration cli tests experiments \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) 2>/dev/null | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
