"use strict";
// Swipe, as the seeds' scroll view (docs/SCREENS.md#swipe): the track follows a finger or a mouse
// drag, and a release past a third of the width, or a flick, moves to the neighbour; otherwise it
// springs back. Shared by the page at / (app.js) and the component (embed.js).

/**
 * Makes `surface` swipeable. `track` is what moves (`translateX`): it holds the current slide with
 * its neighbours already laid out beside it, one width to the left and to the right.
 *
 * - `canSwipe(direction)`: whether there is a neighbour that way (`"next"` or `"previous"`), or,
 *   without a direction, whether a drag may start at all.
 * - `commit(direction)`: called once the track has reached the neighbour; it must show that
 *   neighbour as the current slide, and the track is put back in the same frame.
 * - `touched()`: called at every drag, so that a caller can tell when the last one was.
 * - `reducedMotion()`: no glide when true (the slide still follows the finger).
 */
function attachSwipe(surface, track, {canSwipe, commit, touched = () => {}, reducedMotion = () => false}) {
    const startThreshold = 6; // px before a press becomes a drag (a smaller move is a click)
    const flickSpeed = 0.5; // px per ms, in the drag's direction, that moves on however short
    let drag = null;
    let suppressClick = false;

    surface.addEventListener("pointerdown", (event) => {
        suppressClick = false;
        if (!event.isPrimary || (event.pointerType === "mouse" && event.button !== 0) || !canSwipe()) return;
        drag = {pointer: event.pointerId, startX: event.clientX, dx: 0, moving: false, velocity: 0,
            lastX: event.clientX, lastTime: event.timeStamp};
    });

    surface.addEventListener("pointermove", (event) => {
        if (!drag || event.pointerId !== drag.pointer) return;
        const dx = event.clientX - drag.startX;
        if (!drag.moving) {
            if (Math.abs(dx) < startThreshold) return;
            // Captured only now, so that a plain click still reaches the banner's link.
            drag.moving = true;
            surface.setPointerCapture(event.pointerId);
        }
        const elapsed = event.timeStamp - drag.lastTime;
        if (elapsed > 0) drag.velocity = 0.6 * ((event.clientX - drag.lastX) / elapsed) + 0.4 * drag.velocity;
        drag.lastX = event.clientX;
        drag.lastTime = event.timeStamp;
        // No neighbour that way: the track resists (a third of the finger's travel).
        const direction = dx < 0 ? "next" : "previous";
        drag.dx = canSwipe(direction) ? dx : dx / 3;
        track.style.transform = `translateX(${drag.dx}px)`;
        touched();
    });

    const release = (event) => {
        if (!drag || event.pointerId !== drag.pointer) return;
        const {dx, moving, velocity} = drag;
        drag = null;
        if (!moving) return;
        suppressClick = true;
        touched();
        const width = surface.clientWidth;
        const direction = dx < 0 ? "next" : "previous";
        const flicked = Math.abs(velocity) >= flickSpeed && Math.sign(velocity) === Math.sign(dx);
        const moves = event.type === "pointerup" && canSwipe(direction) && (Math.abs(dx) > width / 3 || flicked);
        const target = moves ? (dx < 0 ? -width : width) : 0;
        track.style.transform = "";
        const glide = track.animate(
            [{transform: `translateX(${dx}px)`}, {transform: `translateX(${target}px)`}],
            {duration: reducedMotion() ? 0 : 260, easing: "cubic-bezier(0.2, 0.8, 0.2, 1)", fill: "forwards"});
        glide.finished.then(() => {
            if (moves) commit(direction);
            glide.cancel(); // back to the untranslated track, with the neighbour now current
        }, () => {});
    };
    surface.addEventListener("pointerup", release);
    surface.addEventListener("pointercancel", release);

    // The click that ends a drag is not a click on the banner's link.
    surface.addEventListener("click", (event) => {
        if (!suppressClick) return;
        suppressClick = false;
        event.preventDefault();
        event.stopPropagation();
    }, true);
    // Images and links would otherwise start the browser's own drag and drop.
    surface.addEventListener("dragstart", (event) => event.preventDefault());
}
