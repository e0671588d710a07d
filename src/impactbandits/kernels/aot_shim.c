/* SciPy's C functions for the ahead-of-time compiled loops (impactbandits.kernels.aot).
 *
 * The numba source calls them by name (impactbandits.kernels.noise: types.ExternalFunction);
 * the JIT resolves the names through llvmlite's symbol table, the ahead-of-time module through
 * these definitions, which call SciPy's own C entry points (scipy.special.cython_special).
 * Their addresses are only known in the running process: impactbandits.kernels.aot.load()
 * passes them to impactbandits_bind before anything is called. */
#include <stdint.h>

static double (*scipy_ndtri)(double) = 0;
static double (*scipy_betaincinv)(double, double, double) = 0;

double impactbandits_ndtri(double y) { return scipy_ndtri(y); }

double impactbandits_betaincinv(double a, double b, double y) { return scipy_betaincinv(a, b, y); }

void impactbandits_bind(void *ndtri, void *betaincinv) {
    scipy_ndtri = (double (*)(double))ndtri;
    scipy_betaincinv = (double (*)(double, double, double))betaincinv;
}
