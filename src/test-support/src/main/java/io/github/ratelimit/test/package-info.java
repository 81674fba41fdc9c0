/**
 * Test support shared by the modules' tests.
 */
@NullMarked
package io.github.ratelimit.test;

import org.jspecify.annotations.NullMarked;
